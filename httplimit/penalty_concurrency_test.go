package httplimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestPollingAConcurrencyLimitAsToldPutsNoOneInTheBox: a refusal by a
// concurrency limit alone tells the client to poll every second
// (Retry-After: 1, a poll interval: a slot frees when a request ends,
// which no clock predicts), so it does not count toward the penalty box. A
// client that polls as told while its one long request runs is admitted as
// soon as its slot frees, not boxed by the documented example box
// (refusals: 20, within: 1m, for: 10m).
func TestPollingAConcurrencyLimitAsToldPutsNoOneInTheBox(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.Concurrency(1, 5*time.Minute).Named("in-flight")}}},
		Penalty: httplimit.Penalty{Refusals: 20, Within: time.Minute, For: 10 * time.Minute},
	})
	h := mw.Handler(okHandler())
	a := req{remote: "192.0.2.1:1"}

	long, err := mw.Decide(a.request()) // an export that runs a while
	if err != nil || !long.Decision.Allowed {
		t.Fatalf("the long request: %v %+v", err, long)
	}
	for i := range 30 { // the client polls as Retry-After says
		clock.Advance(time.Second)
		w := do(h, a)
		if w.Code != 429 || w.Header().Get("Retry-After") != "1" {
			t.Fatalf("poll %d while the slot is held: %d Retry-After %q", i, w.Code, w.Header().Get("Retry-After"))
		}
	}
	mw.Done(context.Background(), long) // the long request ends: its slot is free
	clock.Advance(time.Second)
	if w := do(h, a); w.Code != 200 {
		p := decodeProblem(t, w.Body.String())
		t.Fatalf("the poll after the slot freed: %d (%s, Retry-After %s), want 200: the client only followed Retry-After: 1",
			w.Code, p.Type, w.Header().Get("Retry-After"))
	}
}

// TestARefusalByAConcurrencyAndAnotherLimitCounts: a request refused by a
// concurrency limit and, at once, by another limit of the client's own
// counts toward the penalty box as any refusal by that other limit does:
// only a refusal by concurrency limits alone is left uncounted.
func TestARefusalByAConcurrencyAndAnotherLimitCounts(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.Concurrency(1, 5*time.Minute).Named("in-flight"),
			sluice.FixedWindow(1, time.Hour).Named("per-hour"),
		}}},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
	})
	h := mw.Handler(okHandler())
	a := req{remote: "192.0.2.1:1"}

	long, err := mw.Decide(a.request()) // holds the slot and spends the hour's quota
	if err != nil || !long.Decision.Allowed {
		t.Fatalf("the long request: %v %+v", err, long)
	}
	for i := range 2 { // refused by both limits: counted
		if w := do(h, a); w.Code != 429 {
			t.Fatalf("request %d while the slot is held and the hour spent: %d", i, w.Code)
		}
	}
	mw.Done(context.Background(), long)
	clock.Advance(time.Second)
	w := do(h, a)
	if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Type != httplimit.ProblemPenalty {
		t.Fatalf("after two refusals by per-hour beside in-flight: %d %s, want the box's refusal", w.Code, w.Body.String())
	}
}
