package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
	"github.com/sluice-dev/sluice/sim"
)

// servedAPI is a whole API small enough to exhaust in a test: free allows 4
// requests a minute, generating costs 2, pro has a monthly quota, an
// internal caller has a plan.
const servedAPI = `name: Served API
identity: {user_header: X-User-ID, trusted_proxies: [127.0.0.1/32]}
capacity: 1000/1s
plans:
  - name: free
    limits: [{rate: 4/1m}, {rate: 100/1d, precision: loose}]
  - name: pro
    limits: [{rate: 10/1s, burst: 4}, {rate: 100000/month}]
endpoints:
  - {route: "POST /api/generate", cost: 2, class: expensive}
  - {route: "GET /api/health", exempt: true}
  - {route: "GET /api/export", limit: 2/1m}
  - {route: "GET /api/report", limit: 5/1m, limits: {free: 1/1m}}
internal:
  - {name: batch, rate: 50/1s}
overload: {in_flight: 100}
`

// TestDesignAPIServesWhatItPromises designs a whole API with `sluice design`,
// checks the configuration with `sluice check`, serves it with the server
// package, and holds a few responses to the analysis: each plan's
// RateLimit-Policy is the one the analysis states, costs spend what the
// requirements say, and the stated 4 a minute is never exceeded.
func TestDesignAPIServesWhatItPromises(t *testing.T) {
	dir := t.TempDir()
	reqs, cfgFile := filepath.Join(dir, "api.yaml"), filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(reqs, []byte(servedAPI), 0o644); err != nil {
		t.Fatal(err)
	}
	code, md, errOut := runSluice(t, "design", "-requirements", reqs, "-config", cfgFile)
	if code != 0 {
		t.Fatalf("sluice design: exit %d: %s", code, errOut)
	}
	for _, s := range sim.APISections() {
		if !strings.Contains(md, "\n"+s+"\n") {
			t.Errorf("the analysis has no %q", s)
		}
	}
	if code, _, errOut := runSluice(t, "check", cfgFile); code != 0 {
		t.Fatalf("sluice check: exit %d: %s", code, errOut)
	}
	// The promises, from the design itself (the same seed gives the same
	// design), checked against the analysis text.
	req, err := sim.ReadAPIRequirements(strings.NewReader(servedAPI), "api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := sim.DesignAPI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range []string{"free", "pro", "anonymous", "internal-batch"} {
		if p := a.PolicyHeader(plan); p == "" || !strings.Contains(md, "`RateLimit-Policy: "+p+"`") {
			t.Fatalf("the analysis does not promise plan %s's policy %q", plan, p)
		}
	}

	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.PublicHandler())
	t.Cleanup(ts.Close)
	call := func(method, path string, headers ...string) *http.Response {
		t.Helper()
		r, _ := http.NewRequest(method, ts.URL+path, nil)
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}

	// free (a user id, the default plan): 4 a minute, each response with
	// the promised policy and one unit fewer; the fifth is refused.
	for i := 1; i <= 4; i++ {
		resp := call("GET", "/api/search", "X-User-ID", "alice")
		if resp.StatusCode != 200 {
			t.Fatalf("free request %d: %d", i, resp.StatusCode)
		}
		if got, want := resp.Header.Get("RateLimit-Policy"), a.PolicyHeader("free"); got != want {
			t.Errorf("free request %d: RateLimit-Policy %q, promised %q", i, got, want)
		}
		if got, want := resp.Header.Get("RateLimit"), fmt.Sprintf(`"per-minute";r=%d;`, 4-i); !strings.Contains(got, want) {
			t.Errorf("free request %d: RateLimit %q, want %s…", i, got, want)
		}
	}
	resp := call("GET", "/api/search", "X-User-ID", "alice")
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 429 || ra < 1 {
		t.Errorf("the fifth request in a minute: %d, Retry-After %q; the stated limit is 4", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	// POST /api/generate costs 2 units.
	resp = call("POST", "/api/generate", "X-User-ID", "bob")
	if got := resp.Header.Get("RateLimit"); resp.StatusCode != 200 || !strings.Contains(got, `"per-minute";r=2;`) {
		t.Errorf("a generate request: %d, RateLimit %q, want 2 of 4 left", resp.StatusCode, got)
	}
	// The anonymous plan, and an internal caller's plan by X-Plan.
	if got, want := call("GET", "/api/search").Header.Get("RateLimit-Policy"), a.PolicyHeader("anonymous"); got != want {
		t.Errorf("anonymous: RateLimit-Policy %q, promised %q", got, want)
	}
	if got, want := call("GET", "/api/search", "X-Plan", "internal-batch").Header.Get("RateLimit-Policy"), a.PolicyHeader("internal-batch"); got != want {
		t.Errorf("internal caller: RateLimit-Policy %q, promised %q", got, want)
	}
	// pro (by X-Plan from a trusted address): its bucket is stated as its
	// burst per refill time.
	if got, want := call("GET", "/api/search", "X-User-ID", "carol", "X-Plan", "pro").Header.Get("RateLimit-Policy"), a.PolicyHeader("pro"); got != want {
		t.Errorf("pro: RateLimit-Policy %q, promised %q", got, want)
	}
	// GET /api/export has a limit of its own, 2 a minute, spent with the
	// plan's: the third is refused by the rule.
	for i := 1; i <= 3; i++ {
		resp := call("GET", "/api/export", "X-User-ID", "dave")
		if i == 3 {
			if resp.StatusCode != 429 {
				t.Errorf("the third export in a minute: %d, the stated limit is 2", resp.StatusCode)
			}
			break
		}
		if got, want := resp.Header.Get("RateLimit-Policy"), a.PolicyHeader("free", "GET /api/export"); resp.StatusCode != 200 || got != want {
			t.Errorf("export %d: %d, RateLimit-Policy %q, promised %q", i, resp.StatusCode, got, want)
		}
	}
	// GET /api/report: 1 a minute for free's clients, 5 for the others,
	// each a rule scoped to its plans.
	for i, want := range []int{200, 429} {
		resp := call("GET", "/api/report", "X-User-ID", "erin")
		if got, promised := resp.Header.Get("RateLimit-Policy"), a.PolicyHeader("free", "GET /api/report"); resp.StatusCode != want || got != promised {
			t.Errorf("free report %d: %d, RateLimit-Policy %q; want %d, %q", i+1, resp.StatusCode, got, want, promised)
		}
	}
	for i := 1; i <= 2; i++ {
		resp := call("GET", "/api/report", "X-User-ID", "frank", "X-Plan", "pro")
		got, promised := resp.Header.Get("RateLimit-Policy"), a.PolicyHeader("pro", "GET /api/report")
		if resp.StatusCode != 200 || got != promised || strings.Contains(got, "report-free") {
			t.Errorf("pro report %d: %d, RateLimit-Policy %q; want 200, %q (not free's rule)", i, resp.StatusCode, got, promised)
		}
	}
	// An exempt endpoint carries no limit.
	if resp := call("GET", "/api/health", "X-User-ID", "alice"); resp.StatusCode != 200 || resp.Header.Get("RateLimit") != "" {
		t.Errorf("exempt endpoint: %d, RateLimit %q", resp.StatusCode, resp.Header.Get("RateLimit"))
	}
}

func TestDesignAPIRefusesOneLimitFlags(t *testing.T) {
	reqs := filepath.Join(t.TempDir(), "api.yaml")
	if err := os.WriteFile(reqs, []byte(servedAPI), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runSluice(t, "design", "-requirements", reqs, "-rate", "5/1s")
	if code == 0 || !strings.Contains(errOut, "-rate applies to one limit") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if code, _, errOut := runSluice(t, "design", "-rate", "5/1s", "-shadow"); code == 0 || !strings.Contains(errOut, "whole API") {
		t.Errorf("-shadow with one limit: exit %d: %s", code, errOut)
	}
}
