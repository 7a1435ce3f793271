package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
	"github.com/sluice-dev/sluice/server"
)

// TestKeysInspectResetTop: an operator sees a refused client at the top of
// GET /v1/keys, inspects its limits (which spends nothing), resets them,
// and the client's next request is admitted at once; the reset is logged
// with the caller's name. Without the admin scope, none of it is served.
func TestKeysInspectResetTop(t *testing.T) {
	var logs bytes.Buffer
	f := loggedFixture(t, testConfig, &logs)
	key := map[string]string{"Authorization": "Bearer demo-free-key"}
	for range 4 {
		f.do(t, "GET", "/api/search", "", key)
	}
	const subject = "key:9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29"

	var top []struct {
		Subject string `json:"subject"`
		Client  string `json:"client"`
		Refused int64  `json:"refused"`
	}
	decode(t, f.do(t, "GET", "/v1/keys?top=5", "", nil), &top)
	if len(top) != 1 || top[0].Subject != subject || top[0].Client != "api-key:k1" || top[0].Refused != 1 {
		t.Fatalf("top: %+v", top)
	}

	var state struct {
		Limits []struct {
			Name         string `json:"name"`
			Remaining    int64  `json:"remaining"`
			Used         int64  `json:"used"`
			ResetAfterMs int64  `json:"resetAfterMs"`
		} `json:"limits"`
	}
	for range 2 { // twice: inspecting spends nothing
		decode(t, f.do(t, "GET", "/v1/keys/"+subject, "", nil), &state)
		if len(state.Limits) != 1 || state.Limits[0].Name != "per-minute" || state.Limits[0].Used != 3 || state.Limits[0].Remaining != 0 || state.Limits[0].ResetAfterMs != 60_000 {
			t.Fatalf("inspect: %+v", state)
		}
	}

	// The listed key by its name: the same subject.
	var named struct {
		Subject string `json:"subject"`
	}
	decode(t, f.do(t, "GET", "/v1/keys/name:k1", "", nil), &named)
	if named.Subject != subject {
		t.Errorf("inspect name:k1: subject %q, want %q", named.Subject, subject)
	}
	if r := f.do(t, "GET", "/v1/keys/name:nobody", "", nil); r.StatusCode != 400 || !strings.Contains(readAll(t, r), `no listed API key is named \"nobody\"`) {
		t.Errorf("inspect name:nobody: %d, want 400 naming it", r.StatusCode)
	}

	if r := f.do(t, "DELETE", "/v1/keys/"+subject, "", map[string]string{"Sluice-Token": ""}); r.StatusCode != 401 {
		t.Errorf("reset without a token: %d, want 401", r.StatusCode)
	}
	if r := f.do(t, "DELETE", "/v1/keys/name:k1?limit=per-minute", "", nil); r.StatusCode != 200 {
		t.Fatalf("reset: %d %s", r.StatusCode, readAll(t, r))
	}
	if !strings.Contains(logs.String(), "keys reset") || !strings.Contains(logs.String(), "caller=tests") || !strings.Contains(logs.String(), "subject="+subject) {
		t.Errorf("the reset is not logged with its caller:\n%s", logs.String())
	}
	if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 200 || r.Header.Get("RateLimit") != `"per-minute";r=2;t=60` {
		t.Errorf("after the reset: %d %q, want 200 with 2 left", r.StatusCode, r.Header.Get("RateLimit"))
	}
	if r := f.do(t, "DELETE", "/v1/keys/"+subject+"?limit=per-day", "", nil); r.StatusCode != 404 {
		t.Errorf("reset of a limit the subject does not have: %d, want 404", r.StatusCode)
	}
}

func decode(t *testing.T, r *http.Response, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(readAll(t, r)), v); err != nil || r.StatusCode != 200 {
		t.Fatalf("%d: %v", r.StatusCode, err)
	}
}

// loggedFixture is newFixture on the memory store with the server's log
// written to logs.
func loggedFixture(t *testing.T, cfgText string, logs *bytes.Buffer) *fixture {
	t.Helper()
	f := newFixture(t, cfgText)
	cfg, err := config.Load(f.file)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Clock: f.clock.Now, Store: f.mem, Memory: f.mem,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	f.http = httptest.NewServer(srv.PublicHandler())
	t.Cleanup(f.http.Close)
	f.admin = httptest.NewServer(srv.AdminHandler())
	t.Cleanup(f.admin.Close)
	return f
}

// TestKeysResetOnRedis: on Redis (behind the over-limit cache and the
// failover, as served), a refused client's reset deletes its state's key
// and the cache's memory of the refusal: its next request is admitted at
// once.
func TestKeysResetOnRedis(t *testing.T) {
	var logs bytes.Buffer
	f := redisFixture(t, testConfig, &logs)
	key := map[string]string{"Authorization": "Bearer demo-free-key"}
	for range 4 {
		f.do(t, "GET", "/api/search", "", key)
	}
	const subject = "key:9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29"
	r := f.do(t, "DELETE", "/v1/keys/"+subject, "", nil)
	if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, `"forgot":1`) {
		t.Fatalf("reset: %d %s", r.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "keys reset") || !strings.Contains(logs.String(), "caller=tests") {
		t.Errorf("the reset is not logged with its caller:\n%s", logs.String())
	}
	if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 200 || r.Header.Get("RateLimit") != `"per-minute";r=2;t=60` {
		t.Errorf("after the reset: %d %q, want 200 with 2 left", r.StatusCode, r.Header.Get("RateLimit"))
	}
	f.noStoreErrors(t)
}

// redisFixture is newFixture on a real Redis whose address the
// configuration names (store.redis.addresses), with the server's log
// written to logs.
func redisFixture(t *testing.T, cfgText string, logs *bytes.Buffer) *fixture {
	t.Helper()
	rs := redistest.Standalone(t)
	f := newFixture(t, cfgText)
	text, err := os.ReadFile(f.file)
	if err != nil {
		t.Fatal(err)
	}
	text = append(text, "\nstore:\n  type: redis\n  redis: {addresses: [\""+rs.Addr+"\"]}\n"...)
	if err := os.WriteFile(f.file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(f.file)
	if err != nil {
		t.Fatal(err)
	}
	st, err := redis.Open(context.Background(), redis.Options{Addrs: []string{rs.Addr}, Local: f.mem,
		OverLimit: overlimit.Options{Clock: f.clock.Now}, MustConnect: true, Timeout: fixtureTimeout}, redis.WithTimeForTesting(f.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fo := st.Failover()
	srv, err := server.New(server.Options{Config: cfg, Clock: f.clock.Now, Store: st, Failover: fo, OverLimit: st.Cache(),
		Memory: f.mem, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.srv, f.failover = srv, fo
	f.http = httptest.NewServer(srv.PublicHandler())
	t.Cleanup(f.http.Close)
	f.admin = httptest.NewServer(srv.AdminHandler())
	t.Cleanup(f.admin.Close)
	return f
}

// TestKeysRefuseASubjectThatNamesNoClient: a mistyped subject is a 400
// whose problem lists the subjects there are, not a full quota that reads
// as "all fine" or a reset that forgets nothing; a subject the decision
// API keeps a caller's client under ("ext:" and its subject) is one.
func TestKeysRefuseASubjectThatNamesNoClient(t *testing.T) {
	f := newFixture(t, testConfig)
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/keys/usr:alice"},
		{"GET", "/v1/keys/ip:not-an-address"},
		{"DELETE", "/v1/keys/alice"},
		{"POST", "/v1/keys/usr:alice?action=penalize"},
	} {
		r := f.do(t, c.method, c.path, "", nil)
		body := readAll(t, r)
		if r.StatusCode != 400 || r.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s %s: %d %q %s; want a 400 problem", c.method, c.path, r.StatusCode, r.Header.Get("Content-Type"), body)
			continue
		}
		var p struct{ Detail string }
		json.Unmarshal([]byte(body), &p)
		if c.path == "/v1/keys/ip:not-an-address" {
			continue // an address's own error
		}
		for _, form := range []string{"key:<", "name:<", "user:<", "ip:<", "ext:<", "rule:<"} {
			if !strings.Contains(p.Detail, form) {
				t.Errorf("%s %s: %s; want the forms of a subject listed, %s… among them", c.method, c.path, body, form)
			}
		}
	}
	if r := f.do(t, "POST", "/v1/check", `{"subject":"tenant-42"}`, nil); r.StatusCode != 200 {
		t.Fatalf("check: %d %s", r.StatusCode, readAll(t, r))
	}
	var state struct {
		Subject string `json:"subject"`
		Limits  []struct {
			Used int64 `json:"used"`
		} `json:"limits"`
	}
	decode(t, f.do(t, "GET", "/v1/keys/ext:tenant-42", "", nil), &state)
	if state.Subject != "ext:tenant-42" || len(state.Limits) != 1 || state.Limits[0].Used != 1 {
		t.Errorf("inspect ext:tenant-42: %+v; want the unit its check spent", state)
	}
}
