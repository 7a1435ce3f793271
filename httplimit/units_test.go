package httplimit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A plan whose requests cost 2 units of a 10-per-second limit refuses the
// 6th request and says so in units: its numbers are the limit's, its words
// never call units requests.
func TestRefusalOfACostlyPlanSaysUnits(t *testing.T) {
	clock := clockAt(noon)
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))),
		httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Second)},
				Costs: map[string]int64{"GET /search": 2}}},
			Clock:  clock.Now,
			Logger: quietLogger(),
		})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(okHandler())
	for i := range 5 {
		if w := do(h, req{path: "/search"}); w.Code != 200 {
			t.Fatalf("request %d: %d", i+1, w.Code)
		}
	}
	w := do(h, req{path: "/search"})
	if w.Code != 429 {
		t.Fatalf("6th request: %d, want 429", w.Code)
	}
	p := decodeProblem(t, w.Body.String())
	if !strings.Contains(p.Detail, "10 units per second on the free plan") || !strings.Contains(p.Detail, "This request costs 2 units.") ||
		strings.Contains(p.Detail, "request per") || strings.Contains(p.Detail, "requests per") {
		t.Errorf("detail %q, want 10 units per second and the request's cost", p.Detail)
	}
	if p.Limit != 10 || p.CurrentUsage == nil || p.CurrentUsage.Used != 10 || p.CurrentUsage.Limit != 10 {
		t.Errorf("limit %d, usage %+v: want the limit's own numbers, 10 of 10", p.Limit, p.CurrentUsage)
	}
	// Every request of the plan is said in units, those of cost 1 too.
	clock.Advance(time.Second)
	for range 10 {
		w = do(h, req{path: "/other"})
	}
	if w = do(h, req{path: "/other"}); w.Code != 429 || !strings.Contains(decodeProblem(t, w.Body.String()).Detail, "10 units per second") {
		t.Errorf("cost-1 refusal on a plan of costs: %d %s", w.Code, w.Body)
	}
}

// A plan of requests that all cost 1 says requests; a caller's cost other
// than 1 (the decision API's) is said in units.
func TestRefusalSaysRequestsWhenEveryCostIsOne(t *testing.T) {
	clock := clockAt(noon)
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))),
		httplimit.Options{
			Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Second)}}},
			Clock:  clock.Now,
			Logger: quietLogger(),
		})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(okHandler())
	var w = do(h, req{})
	for i := 0; w.Code == 200 && i < 20; i++ {
		w = do(h, req{})
	}
	if p := decodeProblem(t, w.Body.String()); w.Code != 429 || !strings.Contains(p.Detail, "10 requests per second") || strings.Contains(p.Detail, "units") {
		t.Errorf("%d, detail %q, want 10 requests per second", w.Code, p.Detail)
	}

	clock.Advance(time.Second)
	c := httplimit.Requester{Subject: "batch"}
	for _, cost := range []int64{4, 4, 4} {
		res, err := mw.DecideFor(context.Background(), c, "GET", "/", cost)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Decision.Allowed {
			rec := &recorder{h: http.Header{}}
			r, _ := http.NewRequest("GET", "/", nil)
			mw.Refuse(rec, r, res)
			var p httplimit.Problem
			if err := json.Unmarshal(rec.body, &p); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p.Detail, "10 units per second") || !strings.Contains(p.Detail, "costs 4 units") {
				t.Errorf("a cost of 4: detail %q, want units", p.Detail)
			}
		}
		mw.Discard(res)
	}
}

// recorder keeps a response's body.
type recorder struct {
	h    http.Header
	code int
	body []byte
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(b []byte) (int, error) { r.body = append(r.body, b...); return len(b), nil }

// Global limits are spent by every plan's costs: when some plan's endpoint
// costs more than 1, a global refusal says units to clients of every plan.
func TestGlobalRefusalSaysUnitsWhenSomePlanCostsMore(t *testing.T) {
	clock := clockAt(noon)
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))),
		httplimit.Options{
			Plans: []*httplimit.Plan{
				{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Second)}},
				{Name: "pro", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Second).Named("pro-second")},
					Costs: map[string]int64{"GET /bulk": 2}},
			},
			Global: []sluice.Limit{sluice.FixedWindow(3, time.Second).Named("everyone")},
			Clock:  clock.Now,
			Logger: quietLogger(),
		})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(okHandler())
	var w = do(h, req{})
	for i := 0; w.Code == 200 && i < 10; i++ {
		w = do(h, req{})
	}
	if p := decodeProblem(t, w.Body.String()); w.Code != 429 || !strings.Contains(p.Detail, "3 units per second") {
		t.Errorf("%d, detail %q, want 3 units per second", w.Code, p.Detail)
	}
}
