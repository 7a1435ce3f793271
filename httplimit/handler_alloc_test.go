package httplimit_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// An admitted request of a listed API key allocates less than once on
// average in the middleware: its RateLimit header values are cut from
// blocks that serve dozens of responses; the Result, the checks and the
// key's identity come from pools and caches.
func TestAdmittedRequestAllocatesLessThanOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts mean nothing under the race detector (sync.Pool drops items)")
	}
	for _, limits := range []int{1, 3} {
		cfg := hotPlan(t, limits)
		store := memory.New(memory.WithSweepInterval(0))
		mw, err := httplimit.New(sluice.NewLimiter(store), cfg, httplimit.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			t.Fatal(err)
		}
		h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
		r, _ := http.NewRequest("GET", "http://api.example/v1/items", nil)
		r.Header.Set("X-API-Key", "the-key")
		w := &discard{h: http.Header{}}
		serve := func() {
			clear(w.h)
			w.status = 0
			h.ServeHTTP(w, r)
		}
		serve()
		if n := testing.AllocsPerRun(1000, serve); n >= 1 { // n is rounded down
			t.Errorf("%d limits: %.0f allocations per admitted request, want less than 1", limits, n)
		}
		if w.status != 200 || len(w.h["Ratelimit"]) != 1 || len(w.h["Ratelimit-Policy"]) != 1 {
			t.Errorf("%d limits: status %d, headers %v", limits, w.status, w.h)
		}
		store.Close()
	}
}

// Without WithClock, Result.Now is the store's time of the decision (the
// memory store reports it), so headers and bodies that give absolute times
// agree with the store's clock.
func TestResultNowIsTheStoresTime(t *testing.T) {
	cfg, err := config.Parse("b.yaml", []byte(`
plans:
  p:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 10, window: 1s}
default_plan: p
anonymous_plan: p
`))
	if err != nil {
		t.Fatal(err)
	}
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 123456000, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	defer store.Close()
	mw, err := httplimit.New(sluice.NewLimiter(store), cfg, httplimit.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequest("GET", "http://api.example/v1/items", nil)
	r.RemoteAddr = "192.0.2.1:1234"
	res, err := mw.Decide(r)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Release(res)
	if !res.Now.Equal(clock.Now()) {
		t.Errorf("Result.Now = %v, want the store's %v", res.Now, clock.Now())
	}
}
