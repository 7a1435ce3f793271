package httplimit_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestARulesOwnCostHoldsWhateverTheResultDecidedBefore: a rule of a cost of
// its own charges it on every request it matches, and a client reading its
// standing (StatusHandler, which peeks: every cost 0, rules' included)
// charges nothing, whichever of them a pooled Result decided before, even
// of the same rules at the same cost of the plan (0: an endpoint that
// costs nothing).
func TestARulesOwnCostHoldsWhateverTheResultDecidedBefore(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Hour)},
			Costs: map[string]int64{"GET /free": 0}}},
		Rules: []httplimit.Rule{{Name: "r", Cost: cost(1), Limits: []sluice.Limit{sluice.FixedWindow(100, time.Hour)}}},
	})
	h, status := mw.Handler(okHandler()), mw.StatusHandler()
	const n = 20
	for range n {
		clock.Advance(time.Second) // within the bound of reads
		if w := do(h, req{path: "/free"}); w.Code != 200 {
			t.Fatalf("/free: %d", w.Code)
		}
		w := httptest.NewRecorder()
		status.ServeHTTP(w, req{path: "/status"}.request())
		if w.Code != 200 {
			t.Fatalf("status: %d %s", w.Code, w.Body.String())
		}
	}
	states, err := mw.Inspect(context.Background(), "ip:192.0.2.1", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		want := int64(0) // the plan's: /free costs nothing
		if st.Name == "r.per-hour" {
			want = n // the rule's own cost, once per request to /free
		}
		if st.Used != want {
			t.Errorf("%s: used %d, want %d", st.Name, st.Used, want)
		}
	}
}
