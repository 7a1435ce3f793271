package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
	"github.com/sluice-dev/sluice/server"
)

// With settle.secret_file, an id /v1/check gives on one instance settles
// on another of the fleet (same secret, same store), once; a forged,
// altered, expired or other-secret id is 404 and refunds nothing.
func TestSettleAnywhereInTheFleet(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "settle.secret")
	other := filepath.Join(dir, "other.secret")
	os.WriteFile(secret, []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
	os.WriteFile(other, []byte(strings.Repeat("cd", 32)+"\n"), 0o600)
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(noon))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	instance := func(secretFile string) *httptest.Server {
		file := filepath.Join(t.TempDir(), "sluice.yaml")
		os.WriteFile(file, []byte(settleConfig+testAdmin+"settle: {secret_file: "+secretFile+"}\n"), 0o600)
		cfg, err := config.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(server.Options{Config: cfg, Store: store, Clock: clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		admin := httptest.NewServer(srv.AdminHandler())
		t.Cleanup(admin.Close)
		return admin
	}
	a, b, stranger := instance(secret), instance(secret), instance(other)
	post := func(to *httptest.Server, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", to.URL+path, strings.NewReader(body))
		req.Header.Set(server.TokenHeader, testToken)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var out map[string]any
		json.NewDecoder(r.Body).Decode(&out)
		return r.StatusCode, out
	}
	tokensLeft := func() float64 {
		_, out := post(a, "/v1/check", `{"subject":"batch-7","method":"POST","path":"/api/complete","cost":0}`)
		for _, l := range out["limits"].([]any) {
			if m := l.(map[string]any); m["name"] == "tokens" {
				return m["remaining"].(float64)
			}
		}
		t.Fatalf("no tokens limit in %v", out)
		return 0
	}
	check := func() string {
		_, out := post(a, "/v1/check", `{"subject":"batch-7","method":"POST","path":"/api/complete"}`)
		id, _ := out["settle"].(string)
		if out["allowed"] != true || !strings.Contains(id, ".") {
			t.Fatalf("/v1/check: %v; want admitted with a signed settle id", out)
		}
		return id
	}
	settle := func(to *httptest.Server, id string) int {
		code, _ := post(to, "/v1/settle", `{"id":"`+id+`","status":200,"headers":{"X-Usage-Tokens":"10"}}`)
		return code
	}

	id := check() // 40 reserved: 60 left
	if left := tokensLeft(); left != 60 {
		t.Fatalf("after one completion reserved: %v tokens left, want 60", left)
	}
	enc, tag, _ := strings.Cut(id, ".")
	forged := enc[:len(enc)-2] + "AA." + tag
	for name, code := range map[string]int{
		"another secret's instance": settle(stranger, id),
		"an altered id":             settle(b, forged),
		"no tag":                    settle(b, enc+"."),
	} {
		if code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", name, code)
		}
	}
	if code := settle(b, id); code != http.StatusOK {
		t.Fatalf("settled on another instance: %d, want 200", code)
	}
	if left := tokensLeft(); left != 90 {
		t.Errorf("after the settlement of 10 used: %v tokens left, want 90", left)
	}
	if code := settle(a, id); code != http.StatusNotFound {
		t.Errorf("settled a second time, on the instance that gave it: %d, want 404", code)
	}
	late := check() // 50 left
	clock.us.Add(int64(16 * time.Minute / time.Microsecond))
	if code := settle(b, late); code != http.StatusNotFound {
		t.Errorf("settled 16 minutes late: %d, want 404", code)
	}
	if left := tokensLeft(); left != 100 {
		t.Errorf("a new minute: %v tokens left, want 100", left)
	}
}

// On Redis, a signed id settles once across the fleet through Redis; while
// Redis cannot decide, a settlement waits (503, Retry-After) rather than
// be marked on an instance's local fallback, where every instance would
// allow it once.
func TestSettleOnceNeedsTheSharedStore(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "settle.secret")
	os.WriteFile(secret, []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
	rs := redistest.Standalone(t)
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(noon))
	instance := func() *httptest.Server {
		file := filepath.Join(t.TempDir(), "sluice.yaml")
		os.WriteFile(file, []byte(settleConfig+testAdmin+"settle: {secret_file: "+secret+"}\n"), 0o600)
		cfg, err := config.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		local := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
		t.Cleanup(func() { local.Close() })
		primary := redis.New(rs.Client(t), redis.WithTimeout(fixtureTimeout), redis.WithTimeForTesting(clock.Now))
		cache := overlimit.New(primary, overlimit.Options{Clock: clock.Now})
		fo, err := failover.New(cache, local, failover.Options{Timeout: fixtureTimeout})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(server.Options{Config: cfg, Store: fo, Failover: fo, OverLimit: cache, Memory: local, Clock: clock.Now,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		admin := httptest.NewServer(srv.AdminHandler())
		t.Cleanup(admin.Close)
		return admin
	}
	a, b := instance(), instance()
	post := func(to *httptest.Server, path, body string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", to.URL+path, strings.NewReader(body))
		req.Header.Set(server.TokenHeader, testToken)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var out map[string]any
		json.NewDecoder(r.Body).Decode(&out)
		return r, out
	}
	check := func() string {
		_, out := post(a, "/v1/check", `{"subject":"batch-7","method":"POST","path":"/api/complete"}`)
		id, _ := out["settle"].(string)
		if out["allowed"] != true || !strings.Contains(id, ".") {
			t.Fatalf("/v1/check: %v", out)
		}
		return id
	}
	settle := `{"status":200,"headers":{"X-Usage-Tokens":"10"},"id":"`
	first, second := check(), check()
	if r, _ := post(b, "/v1/settle", settle+first+`"}`); r.StatusCode != http.StatusOK {
		t.Fatalf("settled on the other instance, on Redis: %d", r.StatusCode)
	}
	if r, _ := post(a, "/v1/settle", settle+first+`"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("settled twice, on Redis: %d, want 404", r.StatusCode)
	}
	rs.Kill()
	for _, to := range []*httptest.Server{a, b} {
		if r, body := post(to, "/v1/settle", settle+second+`"}`); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" {
			t.Errorf("a settlement on %s while Redis is down: %d %v, Retry-After %q; want 503 and 1", to.URL, r.StatusCode, body, r.Header.Get("Retry-After"))
		}
	}
}
