package httplimit_test

import (
	"net/http"
	"testing"

	"github.com/sluice-dev/sluice"
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
		mw, err := httplimit.New(sluice.NewLimiter(store), quiet(cfg))
		if err != nil {
			t.Fatal(err)
		}
		h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
		r, _ := http.NewRequest("GET", "http://api.example/v1/items", nil)
		r.Header.Set("X-API-Key", "the-key")
		n, w := allocsPerServe(h, r)
		if n >= 1 { // n is rounded down
			t.Errorf("%d limits: %.0f allocations per admitted request, want less than 1", limits, n)
		}
		if w.status != 200 || len(w.h["Ratelimit"]) != 1 || len(w.h["Ratelimit-Policy"]) != 1 {
			t.Errorf("%d limits: status %d, headers %v", limits, w.status, w.h)
		}
		store.Close()
	}
}
