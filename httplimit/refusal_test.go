package httplimit_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

func exampleConfig(t testing.TB) string {
	b, err := os.ReadFile("../examples/sluice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeProblem(t *testing.T, body string) httplimit.Problem {
	t.Helper()
	var p httplimit.Problem
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("body is not a problem: %v\n%s", err, body)
	}
	return p
}

func TestPerDayRefusalOnFreePlan(t *testing.T) {
	// The example's free plan allows 1000 a day; spend them in expensive
	// requests (cost 10) over a day's worth of minutes, then one more.
	h, clock := setup(t, exampleConfig(t), noon)
	free := map[string]string{"Authorization": "Bearer demo-free-key"}
	for i := range 100 {
		w := do(h, req{method: "POST", path: "/api/generate", header: free})
		if w.Code != 200 {
			t.Fatalf("request %d: %d %s", i, w.Code, w.Body)
		}
		clock.Advance(time.Minute)
	}
	w := do(h, req{method: "POST", path: "/api/generate", header: free})
	if w.Code != 429 {
		t.Fatalf("status %d, want 429", w.Code)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	p := decodeProblem(t, w.Body.String())
	// Now is 12:00 + 100 minutes = 13:40; the day window ends at midnight UTC.
	untilMidnight := int64(10*3600 + 20*60)
	if p.Type != httplimit.ProblemQuotaExceeded || p.Status != 429 || p.Title != "Too Many Requests" {
		t.Errorf("problem header fields: %+v", p)
	}
	if len(p.ViolatedPolicies) != 1 || p.ViolatedPolicies[0] != "per-day" {
		t.Errorf("violated-policies %v, want [per-day]", p.ViolatedPolicies)
	}
	if p.RetryAfter == nil || *p.RetryAfter != untilMidnight || w.Header().Get("Retry-After") != strconv.FormatInt(untilMidnight, 10) {
		t.Errorf("retryAfter %v / Retry-After %q, want %d (midnight)", p.RetryAfter, w.Header().Get("Retry-After"), untilMidnight)
	}
	if p.CurrentUsage == nil || p.CurrentUsage.ResetsAt != "2026-12-01T00:00:00Z" || p.CurrentUsage.Used != 1000 || p.CurrentUsage.Limit != 1000 || p.CurrentUsage.Window != "1d" {
		t.Errorf("currentUsage %+v", p.CurrentUsage)
	}
	if p.Limit != 1000 || p.Window != "1d" || p.Plan != "free" {
		t.Errorf("limit %d window %q plan %q", p.Limit, p.Window, p.Plan)
	}
	if p.Upgrade == nil || p.Upgrade.Plan != "pro" || p.Upgrade.URL != "https://example.com/pricing" {
		t.Errorf("upgrade %+v, want pro", p.Upgrade)
	}
	if p.Documentation != "https://example.com/docs/rate-limits" {
		t.Errorf("documentation %q", p.Documentation)
	}
	// The plan's costs differ from 1: its limits count units, and so does
	// the detail.
	if !strings.Contains(p.Detail, "1000 units per day on the free plan") || !strings.Contains(p.Detail, "This request costs 10 units.") {
		t.Errorf("detail %q", p.Detail)
	}
	if !strings.Contains(w.Header().Get("RateLimit"), `"per-day";r=0;t=37200`) {
		t.Errorf("RateLimit %q does not show the day exhausted", w.Header().Get("RateLimit"))
	}
}

func TestTopPlanRefusalHasNoUpgrade(t *testing.T) {
	h, _ := setup(t, exampleConfig(t), noon)
	ent := map[string]string{"X-API-Key": "demo-enterprise-key"}
	var w = do(h, req{header: ent})
	for i := 0; w.Code == 200 && i < 2000; i++ {
		w = do(h, req{header: ent})
	}
	if w.Code != 429 {
		t.Fatalf("never refused: %d", w.Code)
	}
	p := decodeProblem(t, w.Body.String())
	if p.Upgrade != nil || strings.Contains(w.Body.String(), "upgrade") {
		t.Errorf("the enterprise plan's refusal offers an upgrade: %s", w.Body)
	}
	if p.Plan != "enterprise" || p.ViolatedPolicies[0] != "per-second" {
		t.Errorf("plan %q violated %v", p.Plan, p.ViolatedPolicies)
	}
}

// A client that sleeps exactly Retry-After seconds and retries is admitted.
func TestPropertyRetryAfterIsEnough(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		alg := rapid.SampledFrom(sluice.Algorithms()).Draw(rt, "algorithm")
		q := rapid.IntRange(1, 20).Draw(rt, "quantity")
		window := rapid.SampledFrom([]string{"1s", "3s", "1m", "90s", "1h", "1d"}).Draw(rt, "window")
		start := noon.Add(time.Duration(rapid.Int64Range(0, int64(24*time.Hour)).Draw(rt, "start")))
		h, clock := setup(t, `
plans:
  p:
    limits:
      - {name: l, algorithm: `+alg.String()+`, quantity: `+strconv.Itoa(q)+`, window: `+window+`}
`, start)
		for range rapid.IntRange(0, 3).Draw(rt, "bursts") {
			for range rapid.IntRange(1, 2*q+1).Draw(rt, "burst") {
				do(h, req{})
			}
			clock.Advance(time.Duration(rapid.Int64Range(0, int64(2*time.Second)).Draw(rt, "gap")))
		}
		w := do(h, req{})
		for w.Code == 200 {
			w = do(h, req{})
		}
		ra, err := strconv.Atoi(w.Header().Get("Retry-After"))
		if w.Code != 429 || err != nil || ra < 1 {
			rt.Fatalf("status %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
		}
		clock.Advance(time.Duration(ra) * time.Second)
		if w := do(h, req{}); w.Code != 200 {
			rt.Fatalf("after sleeping Retry-After=%d s: status %d %s", ra, w.Code, w.Body)
		}
	})
}

func TestShadowLimitNeverRefusesButShows(t *testing.T) {
	h, _ := setup(t, `
plans:
  p:
    limits:
      - {name: enforced, algorithm: fixed-window, quantity: 100, window: 1m}
      - {name: trial, algorithm: fixed-window, quantity: 2, window: 1m, shadow: true}
`, noon)
	var w = do(h, req{})
	for range 4 {
		w = do(h, req{})
		if w.Code != 200 {
			t.Fatalf("a shadow limit refused: %d", w.Code)
		}
	}
	if got := w.Header().Get("RateLimit"); got != `"enforced";r=95;t=60, "trial";r=0;t=60` {
		t.Errorf("RateLimit %q", got)
	}
}

func TestCostsAndExemptions(t *testing.T) {
	h, _ := setup(t, exampleConfig(t), noon)
	free := map[string]string{"Authorization": "Bearer demo-free-key"}
	w := do(h, req{method: "POST", path: "/api/generate", header: free})
	if !strings.Contains(w.Header().Get("RateLimit"), `"per-minute";r=20;`) {
		t.Errorf("a cost-10 request: RateLimit %q", w.Header().Get("RateLimit"))
	}
	w = do(h, req{path: "/healthz", header: free})
	if w.Code != 200 || w.Header().Get("RateLimit") != "" {
		t.Errorf("an exempt route got limit headers: %v", w.Header())
	}
	w = do(h, req{path: "/api/health", header: free}) // cost 0: a peek
	if !strings.Contains(w.Header().Get("RateLimit"), `"per-minute";r=20;`) {
		t.Errorf("a cost-0 request consumed: %q", w.Header().Get("RateLimit"))
	}
}

func TestQueueDelaysAndALeavingClientLeaves(t *testing.T) {
	h, _ := setup(t, `
plans:
  p:
    limits:
      - {name: queue, algorithm: leaky-bucket, quantity: 2, window: 1s, burst: 1, max_wait: 2s}
`, noon)
	// The store's clock is frozen, so the queue does not drain: each request
	// waits 500ms more than the one before it.
	do(h, req{}) // fits
	start := time.Now()
	if w := do(h, req{}); w.Code != 200 {
		t.Fatalf("queued request: %d", w.Code)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Errorf("the queued request did not wait its 500ms turn (%v)", waited)
	}
	// The next one is due in 1s; its client gives up after 20ms and must
	// leave at once, without reaching the handler (half a second allows
	// for a loaded machine's late wake-up, and is half the turn).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	r := httptest.NewRequest("GET", "/api/search", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	start = time.Now()
	h.ServeHTTP(w, r)
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("a cancelled client stayed %v in the queue", took)
	}
	if w.Body.String() == "ok" {
		t.Error("a client that left the queue reached the handler")
	}
}

// A refusal by a global limit says so: the limit is the service's, shared
// by every client, not the client's plan's.
func TestAGlobalRefusalNamesTheServiceNotThePlan(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
		Global: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("service")},
	})
	statuses(mw, req{remote: "192.0.2.1:1"})
	w := do(mw.Handler(okHandler()), req{remote: "192.0.2.2:1"})
	p := decodeProblem(t, w.Body.String())
	if w.Code != 429 || strings.Contains(p.Detail, "free plan") || !strings.Contains(p.Detail, "shared by every client") {
		t.Errorf("%d %q; want a detail naming the service's limit, not the plan's", w.Code, p.Detail)
	}
}

// A request that costs more than a limit can ever hold is told which limit
// that is, as it is configured: a rule's limit under its rule, not as a
// limit of the client's plan (which would read as if an upgrade could
// help). The configuration refuses such a rule at load; a program that
// builds its Options itself can still give one.
func TestARefusalNoWaitAdmitsNamesTheRuleOfItsLimit(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute).Named("per-minute")},
			Costs: map[string]int64{"POST /big": 10}}},
		Rules: []httplimit.Rule{{Name: "big", Paths: []string{"/big"}, Key: []string{"route"},
			Limits: []sluice.Limit{sluice.FixedWindow(5, time.Hour).Named("m")}}},
	})
	h := mw.Handler(okHandler())
	w := do(h, req{method: "POST", path: "/big", remote: "192.0.2.1:1"})
	const want = "This request costs 10 units, more than the 5 that the big.m limit of the big rule can ever hold: it cannot be admitted."
	if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Detail != want {
		t.Errorf("%d %q, want %q", w.Code, p.Detail, want)
	}
}
