package httplimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A Result ended twice — a deferred Done beside an explicit one, or Done
// after Discard — goes back to the pool once: two later requests never
// share one Result, and the second call gives back no lease.
func TestAResultEndedTwiceIsPooledOnce(t *testing.T) {
	ctx := context.Background()
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
	})
	decide := func(user string) *httplimit.Result {
		t.Helper()
		res, err := mw.DecideFor(ctx, httplimit.Requester{User: user}, "GET", "/", 1)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, end := range []func(*httplimit.Result){
		func(r *httplimit.Result) { mw.Done(ctx, r); mw.Done(ctx, r) },
		func(r *httplimit.Result) { mw.Discard(r); mw.Done(ctx, r) },
		func(r *httplimit.Result) { mw.Done(ctx, r); mw.Discard(r) },
	} {
		end(decide("a"))
		b, c := decide("b"), decide("c")
		if b == c {
			t.Fatal("two requests in flight share one Result: it went back to the pool twice")
		}
		if b.Identity.Subject == c.Identity.Subject {
			t.Errorf("two requests decided as %q and %q", b.Identity.Subject, c.Identity.Subject)
		}
		mw.Done(ctx, b)
		mw.Done(ctx, c)
	}
}
