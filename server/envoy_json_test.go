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
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// startEnvoyJSON starts a server with rules (of one domain) and returns
// the base URL of its admin listener. Its store's clock stands still at
// noon: the rules' windows are aligned to the clock, and on the wall clock
// one that ended between two of a test's calls gave its quantity again.
func startEnvoyJSON(t *testing.T, rules string) string {
	t.Helper()
	return startEnvoyJSONOn(t, rules, memory.New(memory.WithClock(func() time.Time { return noon }), memory.WithSweepInterval(0)))
}

// startEnvoyJSONOn is startEnvoyJSON on store.
func startEnvoyJSONOn(t *testing.T, rules string, store sluice.Store) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(rules), 0o644)
	cfgFile := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(cfgFile, []byte("envoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\n"+testConfig+testAdmin), 0o644)
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	waitEnvoy(t, srv)
	return "http://" + addrs.admin
}

// postJSON posts body to url with token (none when "") and returns the
// status, the Content-Type and the body of the answer.
func postJSON(t *testing.T, url, token, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

const jsonRules = "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 2}\n"

// jsonCall is envoyproxy/ratelimit's example of its /json endpoint
// (src/server/server_impl.go, NewJsonHandler), for the rules above.
const jsonCall = `{"domain": "edge", "descriptors": [{"entries": [{"key": "remote_address", "value": "198.51.100.7"}]}]}`

// TestEnvoyJSONEndpoint: envoyproxy/ratelimit serves POST /json on its
// HTTP port — a RateLimitRequest in protobuf's JSON, answered with the
// RateLimitResponse in protobuf's JSON, 200 when OK and 429 when
// OVER_LIMIT (NewJsonHandler in src/server/server_impl.go). sluice serves
// it on the admin listener, to callers with the check scope, as its gRPC
// service; a stranger is refused 401 and spends nothing.
func TestEnvoyJSONEndpoint(t *testing.T) {
	base := startEnvoyJSON(t, jsonRules)
	for _, token := range []string{"", "guess"} {
		status, _, body := postJSON(t, base+"/json", token, jsonCall)
		if status != http.StatusUnauthorized {
			t.Errorf("token %q: %d %s, want 401", token, status, body)
		}
	}
	type answer struct {
		OverallCode string `json:"overallCode"`
		Statuses    []struct {
			Code         string `json:"code"`
			CurrentLimit struct {
				Name            string `json:"name"`
				RequestsPerUnit int    `json:"requestsPerUnit"`
				Unit            string `json:"unit"`
			} `json:"currentLimit"`
			LimitRemaining     int    `json:"limitRemaining"`
			DurationUntilReset string `json:"durationUntilReset"`
		} `json:"statuses"`
	}
	for i, want := range []struct {
		status    int
		code      string
		remaining int
	}{{200, "OK", 1}, {200, "OK", 0}, {429, "OVER_LIMIT", 0}} {
		status, ctype, body := postJSON(t, base+"/json", testToken, jsonCall)
		if status != want.status || ctype != "application/json" {
			t.Fatalf("call %d: %d %q %s, want %d application/json", i, status, ctype, body, want.status)
		}
		var a answer
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			t.Fatalf("call %d: %v in %s", i, err, body)
		}
		if a.OverallCode != want.code || len(a.Statuses) != 1 || a.Statuses[0].Code != want.code ||
			a.Statuses[0].LimitRemaining != want.remaining || a.Statuses[0].CurrentLimit.RequestsPerUnit != 2 ||
			a.Statuses[0].CurrentLimit.Unit != "MINUTE" || a.Statuses[0].DurationUntilReset == "" {
			t.Errorf("call %d: %s, want %s with %d remaining of 2 per MINUTE", i, body, want.code, want.remaining)
		}
	}
}

// TestEnvoyJSONRefusesBadInputAndSpendsNothing: a body that is not a
// RateLimitRequest, one the service refuses, or one too large is answered
// with a problem (400, 413) and spends nothing; another method is 405.
func TestEnvoyJSONRefusesBadInputAndSpendsNothing(t *testing.T) {
	base := startEnvoyJSON(t, jsonRules)
	huge := `{"domain": "edge", "descriptors": [{"entries": [{"key": "remote_address", "value": "198.51.100.7"}]}], "hitsAddend": 1` +
		strings.Repeat(" ", 2<<20) + "}"
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"not JSON", "domain=edge", http.StatusBadRequest},
		{"an unknown field", `{"domain": "edge", "descriptors": [], "cost": 1}`, http.StatusBadRequest},
		{"no descriptors", `{"domain": "edge"}`, http.StatusBadRequest},
		{"a descriptor without entries", `{"domain": "edge", "descriptors": [{}]}`, http.StatusBadRequest},
		{"two values", jsonCall + jsonCall, http.StatusBadRequest},
		{"more than a megabyte", huge, http.StatusRequestEntityTooLarge},
	} {
		status, ctype, body := postJSON(t, base+"/json", testToken, tc.body)
		if status != tc.status || ctype != "application/problem+json" {
			t.Errorf("%s: %d %q %.200s, want %d application/problem+json", tc.name, status, ctype, body, tc.status)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/json", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodPost {
		t.Errorf("GET /json: %d Allow %q, want 405 Allow POST", resp.StatusCode, resp.Header.Get("Allow"))
	}
	// Both units of 198.51.100.7 are still there.
	if _, _, body := postJSON(t, base+"/json", testToken, jsonCall); !strings.Contains(body, `"limitRemaining":1`) {
		t.Errorf("after the refused bodies: %s, want 1 remaining of 2", body)
	}
}

// TestEnvoyJSONIsNotOnThePublicListener: the public listener's /json is
// the upstream's, never the Envoy service.
func TestEnvoyJSONIsNotOnThePublicListener(t *testing.T) {
	srv := startEnvoy(t, jsonRules)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/json", strings.NewReader(jsonCall))
	req.Header.Set("Authorization", "Bearer "+testToken)
	srv.PublicHandler().ServeHTTP(rec, req)
	if strings.Contains(rec.Body.String(), "overallCode") {
		t.Errorf("the public listener answered the Envoy service's JSON: %d %s", rec.Code, rec.Body)
	}
}

// While the store cannot decide, /json answers 503 with Retry-After, as
// the decision API does: a caller's retry loop has a wait to keep.
func TestEnvoyJSONStoreDownIsA503WithRetryAfter(t *testing.T) {
	base := startEnvoyJSONOn(t, jsonRules, unreachableStore{memory.New(memory.WithSweepInterval(0))})
	req, err := http.NewRequest(http.MethodPost, base+"/json", strings.NewReader(jsonCall))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("/json with the store down: %d, Retry-After %q; want 503 and 1: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}
