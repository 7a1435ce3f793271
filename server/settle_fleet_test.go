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

// settleSecret writes a settle secret of 32 bytes, hex repeated from pair,
// and returns its file.
func settleSecret(t *testing.T, pair string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), pair+".secret")
	if err := os.WriteFile(file, []byte(strings.Repeat(pair, 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// signingInstance serves the admin listener of a server of settleConfig
// whose settlement ids are signed with secretFile, built with o (Config
// set here), until the test ends.
func signingInstance(t *testing.T, secretFile string, o server.Options) *httptest.Server {
	t.Helper()
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	os.WriteFile(file, []byte(settleConfig+testAdmin+"settle: {secret_file: "+secretFile+"}\n"), 0o600)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	o.Config, o.Logger = cfg, slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	admin := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(admin.Close)
	return admin
}

// postAdmin posts body to path as the test caller and returns the answer
// with its JSON body decoded.
func postAdmin(t *testing.T, to *httptest.Server, path, body string) (*http.Response, map[string]any) {
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

// checkSigned asks to for a completion of batch-7 (40 tokens reserved) and
// returns its signed settlement id.
func checkSigned(t *testing.T, to *httptest.Server) string {
	t.Helper()
	_, out := postAdmin(t, to, "/v1/check", `{"subject":"batch-7","method":"POST","path":"/api/complete"}`)
	id, _ := out["settle"].(string)
	if out["allowed"] != true || !strings.Contains(id, ".") {
		t.Fatalf("/v1/check: %v; want admitted with a signed settle id", out)
	}
	return id
}

// settleBody is the settlement of id by an answer of 200 that used 10
// tokens.
func settleBody(id string) string {
	return `{"id":"` + id + `","status":200,"headers":{"X-Usage-Tokens":"10"}}`
}

// With settle.secret_file, an id /v1/check gives on one instance settles
// on another of the fleet (same secret, same store), once; a forged,
// altered, expired or other-secret id is 404 and refunds nothing.
func TestSettleAnywhereInTheFleet(t *testing.T) {
	secret, other := settleSecret(t, "ab"), settleSecret(t, "cd")
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(noon))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	o := server.Options{Store: store, Clock: clock.Now}
	a, b, stranger := signingInstance(t, secret, o), signingInstance(t, secret, o), signingInstance(t, other, o)
	tokensLeft := func() float64 {
		_, out := postAdmin(t, a, "/v1/check", `{"subject":"batch-7","method":"POST","path":"/api/complete","cost":0}`)
		for _, l := range out["limits"].([]any) {
			if m := l.(map[string]any); m["name"] == "tokens" {
				return m["remaining"].(float64)
			}
		}
		t.Fatalf("no tokens limit in %v", out)
		return 0
	}
	settle := func(to *httptest.Server, id string) int {
		r, _ := postAdmin(t, to, "/v1/settle", settleBody(id))
		return r.StatusCode
	}

	id := checkSigned(t, a) // 40 reserved: 60 left
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
	late := checkSigned(t, a) // 50 left
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
	secret := settleSecret(t, "ab")
	rs := redistest.Standalone(t)
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(noon))
	instance := func() *httptest.Server {
		local := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
		t.Cleanup(func() { local.Close() })
		primary := redis.New(rs.Client(t), redis.WithTimeout(fixtureTimeout), redis.WithTimeForTesting(clock.Now))
		cache := overlimit.New(primary, overlimit.Options{Clock: clock.Now})
		fo, err := failover.New(cache, local, failover.Options{Timeout: fixtureTimeout})
		if err != nil {
			t.Fatal(err)
		}
		return signingInstance(t, secret, server.Options{Store: fo, Failover: fo, OverLimit: cache, Memory: local, Clock: clock.Now})
	}
	a, b := instance(), instance()
	first, second := checkSigned(t, a), checkSigned(t, a)
	if r, _ := postAdmin(t, b, "/v1/settle", settleBody(first)); r.StatusCode != http.StatusOK {
		t.Fatalf("settled on the other instance, on Redis: %d", r.StatusCode)
	}
	if r, _ := postAdmin(t, a, "/v1/settle", settleBody(first)); r.StatusCode != http.StatusNotFound {
		t.Errorf("settled twice, on Redis: %d, want 404", r.StatusCode)
	}
	rs.Kill()
	for _, to := range []*httptest.Server{a, b} {
		if r, body := postAdmin(t, to, "/v1/settle", settleBody(second)); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" {
			t.Errorf("a settlement on %s while Redis is down: %d %v, Retry-After %q; want 503 and 1", to.URL, r.StatusCode, body, r.Header.Get("Retry-After"))
		}
	}
}
