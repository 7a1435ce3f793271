package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

func TestInFlightLimitAdmitsExactlyTenAtATime(t *testing.T) {
	cfg, err := config.Parse("t.yaml", []byte(`
plans:
  p:
    limits:
      - {name: in-flight, algorithm: concurrency, quantity: 10, window: 1m}
`))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithSweepInterval(0))), quiet(cfg))
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	var inFlight, peak atomic.Int64
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-gate
		inFlight.Add(-1)
	}))
	var wg sync.WaitGroup
	var ok, refused atomic.Int64
	var refusal atomic.Value
	for range 50 {
		wg.Go(func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/slow", nil))
			switch w.Code {
			case 200:
				ok.Add(1)
			case 429:
				refused.Add(1)
				refusal.Store(w)
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for refused.Load() < 40 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if inFlight.Load() != 10 || refused.Load() != 40 {
		t.Fatalf("in flight %d, refused %d: want exactly 10 and 40", inFlight.Load(), refused.Load())
	}
	close(gate)
	wg.Wait()
	if peak.Load() != 10 || ok.Load() != 10 {
		t.Errorf("peak %d admitted %d", peak.Load(), ok.Load())
	}
	w := refusal.Load().(*httptest.ResponseRecorder)
	if w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), "Too many concurrent requests") ||
		!strings.Contains(w.Header().Get("RateLimit-Policy"), `"in-flight";q=10;qu="concurrent-requests"`) {
		t.Errorf("refusal: %v %s", w.Header(), w.Body)
	}
	// Every lease came back: ten more fit.
	for i := range 10 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/slow", nil))
		if w.Code != 200 {
			t.Fatalf("after release, request %d: %d", i, w.Code)
		}
	}
}

func TestQueueBurstOfTwentyAgainstFivePerSecond(t *testing.T) {
	// The scenario through the middleware: 20 at once against 5/s
	// with max_wait 2s: 5 pass at once, 10 wait 0.2s … 2.0s, 5 are refused.
	h, _ := setup(t, `
plans:
  p:
    limits:
      - {name: queue, algorithm: leaky-bucket, quantity: 5, window: 1s, max_wait: 2s}
`, noon)
	type outcome struct {
		code   int
		waited time.Duration
	}
	results := make(chan outcome, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			start := time.Now()
			w := do(h, req{})
			results <- outcome{w.Code, time.Since(start)}
		})
	}
	wg.Wait()
	close(results)
	var waits []time.Duration // of the admitted
	refused := 0
	for r := range results {
		switch r.code {
		case 200:
			waits = append(waits, r.waited)
		case 429:
			refused++
		}
	}
	if len(waits) != 15 || refused != 5 {
		t.Fatalf("admitted %d, refused %d: want 15 (10 of them queued) and 5", len(waits), refused)
	}
	// The k-th queued request waits its turn, k × 200 ms, at least (a
	// loaded machine can only make it later); the five at once wait less
	// than the first turn; the last, about 2 s (the leak rate).
	slices.Sort(waits)
	for k := 1; k <= 10; k++ {
		if turn := time.Duration(k) * 200 * time.Millisecond; waits[4+k] < turn-10*time.Millisecond {
			t.Errorf("queued request %d waited %v, before its turn %v (waits %v)", k, waits[4+k], turn, waits)
		}
	}
	if waits[4] >= 200*time.Millisecond {
		t.Errorf("the fifth request admitted at once waited %v, a turn (waits %v)", waits[4], waits)
	}
	if longest := waits[14]; longest > 3*time.Second {
		t.Errorf("the last queued request waited %v, want about 2s (the leak rate)", longest)
	}
}

// A request refused by a concurrency limit and a rate limit at once is told
// to come back when the rate limit admits it: a slot frees when a request
// ends, which no clock predicts (a refused client polls each second), so
// the concurrency lease's expiry is no wait to state. Retry-After, the
// deciding figures of the draft modes and the body are the rate limit's.
func TestRefusedByConcurrencyAndARateLimitWaitsForTheRateLimit(t *testing.T) {
	for _, c := range []struct{ mode, field, want string }{
		{httplimit.ModeIETF, "RateLimit", `"conc";r=0, "per-minute";r=0;t=50`},
		{httplimit.ModeDraft7, "RateLimit", "limit=1, remaining=0, reset=50"},
		{httplimit.ModeLegacy, "X-RateLimit-Reset", "1796040060"}, // 12:01:00
	} {
		mw, clock := clockedMiddleware(t, httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
				sluice.Concurrency(1, 10*time.Minute).Named("conc"), sluice.FixedWindow(1, time.Minute)}}},
			Headers: []string{c.mode},
		})
		clock.Advance(250 * time.Millisecond)
		held, err := mw.Decide(req{}.request()) // in flight: the slot and the minute's one request
		if err != nil || !held.Decision.Allowed {
			t.Fatalf("the first request: %v", err)
		}
		clock.Advance(10 * time.Second) // 12:00:10.25: the minute ends in 49.75 s
		w := do(mw.Handler(okHandler()), req{})
		p := decodeProblem(t, w.Body.String())
		if w.Code != 429 || w.Header().Get("Retry-After") != "50" || w.Header().Get(c.field) != c.want {
			t.Errorf("%s: %d, Retry-After %q, %s %q; want 429, 50, %q", c.mode, w.Code, w.Header().Get("Retry-After"), c.field, w.Header().Get(c.field), c.want)
		}
		if p.RetryAfter == nil || *p.RetryAfter != 50 || p.Policy != "per-minute" || p.Window != "1m" ||
			p.CurrentUsage == nil || p.CurrentUsage.ResetsAt != "2026-11-30T12:01:00Z" ||
			p.Detail != "Rate limit exceeded: 1 request per minute on the free plan. Retry in 50 s. Limits exceeded: conc, per-minute." {
			t.Errorf("%s: body %s", c.mode, w.Body.String())
		}
		mw.Done(t.Context(), held)
	}
}

// A rule's concurrency limit that refuses is stated as the rule's, not as
// one of the client's plan: "under the uploads rule", whose slots the
// requests it counts hold (every client's, for a rule keyed by route).
func TestARulesConcurrencyRefusalNamesTheRule(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{})
	h, _ := setupNext(t, `
plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
default_plan: free
rules:
  - name: uploads
    match: {paths: ["/up"]}
    key: [route]
    limits: [{name: in-flight, algorithm: concurrency, quantity: 1, window: 1m}]
`, noon, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-gate
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		do(h, req{path: "/up", remote: "192.0.2.1:1"})
	}()
	<-started
	w := do(h, req{path: "/up", remote: "192.0.2.2:1"})
	close(gate)
	<-done
	const want = "Too many concurrent requests: at most 1 request at once under the uploads rule. Retry when a request it counts has finished."
	if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Detail != want {
		t.Errorf("%d %q, want %q", w.Code, p.Detail, want)
	}
}
