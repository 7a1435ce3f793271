package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// refusalLines returns the JSON log lines in logs whose msg is msg.
func refusalLines(t *testing.T, logs string, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(logs) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == msg {
			delete(m, "time")
			delete(m, "level")
			delete(m, "msg")
			out = append(out, m)
		}
	}
	return out
}

// TestRefusalsAreLogged: a refusal of the proxy, of forward-auth and of the
// decision API each make a line that says where, what (method and path,
// never the query) and who (the key's hash and name, never the key), the
// plan, the limits and the wait, and the request's X-Request-Id (cut to 128
// bytes) when it has one; admitted requests make none.
func TestRefusalsAreLogged(t *testing.T) {
	var logs realtest.Buffer
	f := newFixtureWith(t, testConfig, func(o *server.Options) { o.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	key := map[string]string{"X-API-Key": "demo-free-key"}
	for range 3 {
		f.do(t, "GET", "/api/search", "", key)
	}
	if got := refusalLines(t, logs.String(), "request refused"); len(got) != 0 {
		t.Fatalf("admitted requests were logged as refused: %v", got)
	}
	f.do(t, "GET", "/api/search?token=secret-query", "", map[string]string{"X-API-Key": "demo-free-key",
		"X-Request-Id": "req-" + strings.Repeat("x", 200)})
	f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-API-Key": "demo-free-key",
		"X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/api/generate?x=1", "X-Forwarded-Host": "api.example.com"})
	f.do(t, "POST", "/v1/check", `{"api_key":"demo-free-key","method":"DELETE","path":"/api/items/7?x=1"}`, nil)

	lines := refusalLines(t, logs.String(), "request refused")
	subject := "key:9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29"
	want := []map[string]any{
		{"via": "proxy", "status": 429.0, "method": "GET", "path": "/api/search", "request_id": ("req-" + strings.Repeat("x", 200))[:128]},
		{"via": "forward-auth", "status": 429.0, "method": "POST", "path": "/api/generate"},
		{"via": "decision-api", "method": "DELETE", "path": "/api/items/7"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d refusal lines, want %d:\n%s", len(lines), len(want), logs.String())
	}
	for i, w := range want {
		w["subject"], w["key_name"], w["plan"], w["limits"] = subject, "k1", "free", []any{"per-minute"}
		got := lines[i]
		if ra, ok := got["retry_after_s"].(float64); !ok || ra < 1 || ra > 60 {
			t.Errorf("line %d: retry_after_s %v, want 1..60", i, got["retry_after_s"])
		}
		delete(got, "retry_after_s")
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			t.Errorf("line %d:\n got %s\nwant %s", i, gj, wj)
		}
	}
	if s := logs.String(); strings.Contains(s, "demo-free-key") || strings.Contains(s, "secret-query") {
		t.Errorf("the log holds a raw key or a query:\n%s", s)
	}
}

// TestEnvoyRefusalsAreLogged: a refusal of Envoy's service makes a line with
// its domain and limits, not the descriptor's values.
func TestEnvoyRefusalsAreLogged(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte("domain: edge\ndescriptors:\n  - key: api_key\n    rate_limit: {name: per-key, unit: minute, requests_per_unit: 1}\n"), 0o644)
	cfg, err := config.Parse(filepath.Join(dir, "sluice.yaml"), []byte("envoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\n"+testConfig+testAdmin))
	if err != nil {
		t.Fatal(err)
	}
	var logs realtest.Buffer
	// The store's clock stands still at noon: on the wall clock a minute
	// that ended between the two calls admitted the second.
	still := memory.New(memory.WithClock(func() time.Time { return noon }), memory.WithSweepInterval(0))
	srv, err := server.New(server.Options{Config: cfg, Store: still,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)
	waitEnvoy(t, srv)
	client := envoyClient(t, srv)
	for range 2 {
		if _, err := client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "api_key", Value: "RAW-SECRET"}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	lines := refusalLines(t, logs.String(), "request refused")
	if len(lines) != 1 || lines[0]["via"] != "envoy" || lines[0]["domain"] != "edge" ||
		!slices.Equal(lines[0]["limits"].([]any), []any{"per-key"}) {
		t.Fatalf("envoy refusal lines %v\n%s", lines, logs.String())
	}
	if strings.Contains(logs.String(), "RAW-SECRET") {
		t.Errorf("the log holds a descriptor's value:\n%s", logs.String())
	}
}

// TestRefusalNoWaitIsLogged: a request that costs more than a limit can ever
// hold is logged with no wait (no wait admits it), never a negative one.
func TestRefusalNoWaitIsLogged(t *testing.T) {
	var logs realtest.Buffer
	f := newFixtureWith(t, testConfig, func(o *server.Options) { o.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	f.do(t, "POST", "/v1/check", `{"user":"u1","cost":4}`, nil)
	lines := refusalLines(t, logs.String(), "request refused")
	if len(lines) != 1 {
		t.Fatalf("%d refusal lines, want 1:\n%s", len(lines), logs.String())
	}
	if ra, ok := lines[0]["retry_after_s"]; ok {
		t.Errorf("retry_after_s %v for a request no wait admits; want none", ra)
	}
}
