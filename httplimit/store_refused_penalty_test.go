package httplimit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// denying answers as a failover's deny policy does while down is set:
// every check refused and Unavailable; otherwise next decides.
type denying struct {
	next sluice.Store
	down atomic.Bool
}

func (s *denying) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if !s.down.Load() {
		return s.next.Apply(ctx, checks, out)
	}
	for i := range out {
		out[i] = sluice.Status{RetryAfter: time.Second, ResetAfter: time.Second, Unavailable: true}
	}
	return nil
}

// A penalty box decides nothing while the store cannot decide: a request
// refused under a failover's deny policy is the service's capacity (503,
// temporary-reduced-capacity), not the box's 429, and such refusals do not
// count toward boxing the client, who is served once the store is back.
// A read of the client's standing meanwhile is a 503 too, and not
// observed: a peek decides no request, so its failure is no request left
// undecided.
func TestAPenaltyBoxDecidesNothingWhileTheStoreCannotDecide(t *testing.T) {
	local := memory.New()
	t.Cleanup(func() { local.Close() })
	store := &denying{next: local}
	failures := 0
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(100).Named("per-minute")}}},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
		Observer: func(_ *httplimit.Result, _ time.Duration, err error) {
			if err != nil {
				failures++
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	serve := func(h http.Handler) (int, httplimit.Problem) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/items", nil))
		var p httplimit.Problem
		if rec.Code != http.StatusOK {
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
			}
		}
		return rec.Code, p
	}
	store.down.Store(true)
	for i := range 5 {
		if code, p := serve(h); code != http.StatusServiceUnavailable || p.Type != httplimit.ProblemReducedCapacity {
			t.Fatalf("request %d with the store down under deny: %d %s %q; want 503 %s", i+1, code, p.Type, p.Detail, httplimit.ProblemReducedCapacity)
		}
	}
	if code, p := serve(mw.StatusHandler()); code != http.StatusServiceUnavailable || p.Type != httplimit.ProblemReducedCapacity || failures != 0 {
		t.Errorf("the standing with the store down under deny: %d %s, %d failures observed; want 503 %s, none observed", code, p.Type, failures, httplimit.ProblemReducedCapacity)
	}
	store.down.Store(false)
	if code, p := serve(h); code != http.StatusOK {
		t.Errorf("the store back: %d %s %q; want 200 (five refusals under deny box no one)", code, p.Type, p.Detail)
	}
}
