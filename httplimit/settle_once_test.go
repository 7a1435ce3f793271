package httplimit_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// Done's contract: "A second Done or Discard of res, before any later
// request, does nothing", and a request's charges are "settled at most
// once". DoneWithStatus, DoneWithResponse and DoneUnserved end a request
// "as Done does": on a Result already ended they give nothing back. With
// "fails" counting only failures and "wins" only successes (3 allowed
// each), two failures leave 1 of fails and 3 of wins; a third request
// ended with Done or Discard is counted in full (0 and 2 left), and a
// later DoneWithStatus(200) or DoneUnserved on the Result, now back in the
// pool, must not refund it. Kept first, the request is settled once by its
// Pending, never a second time through the Result.
func TestASecondEndOfAResultRefundsNothing(t *testing.T) {
	ctx := context.Background()
	who := httplimit.Requester{IP: netip.MustParseAddr("192.0.2.1")}
	for _, c := range []struct {
		name string
		end  func(mw *httplimit.Middleware, res *httplimit.Result)
		// fails and wins are what the limits have left.
		fails, wins int64
	}{
		{"Done, DoneWithStatus(200)", func(mw *httplimit.Middleware, res *httplimit.Result) {
			mw.Done(ctx, res)
			mw.DoneWithStatus(ctx, res, 200)
		}, 0, 2},
		{"Discard, DoneWithStatus(200)", func(mw *httplimit.Middleware, res *httplimit.Result) {
			mw.Discard(res)
			mw.DoneWithStatus(ctx, res, 200)
		}, 0, 2},
		{"Done, DoneUnserved", func(mw *httplimit.Middleware, res *httplimit.Result) {
			mw.Done(ctx, res)
			mw.DoneUnserved(ctx, res)
		}, 0, 2},
		{"DoneWithStatus(500), DoneWithStatus(200)", func(mw *httplimit.Middleware, res *httplimit.Result) {
			mw.DoneWithStatus(ctx, res, 500)
			mw.DoneWithStatus(ctx, res, 200)
		}, 0, 3},
		{"Keep, Done, DoneWithStatus(200), Settle(200)", func(mw *httplimit.Middleware, res *httplimit.Result) {
			p := mw.Keep(res)
			mw.Done(ctx, res)
			mw.DoneWithStatus(ctx, res, 200) // the Result's second end
			p.Settle(ctx, 200, nil)          // the one settlement
		}, 1, 2},
		{"Keep, DoneWithStatus(200), Settle(200)", func(mw *httplimit.Middleware, res *httplimit.Result) {
			p := mw.Keep(res)
			mw.DoneWithStatus(ctx, res, 200) // the one settlement, the Pending's
			p.Settle(ctx, 200, nil)
		}, 1, 2},
		{"Keep, DoneUnserved, Settle(200)", func(mw *httplimit.Middleware, res *httplimit.Result) {
			p := mw.Keep(res)
			mw.DoneUnserved(ctx, res) // the one settlement, the Pending's: no answer, a failure
			p.Settle(ctx, 200, nil)
		}, 0, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			mw := counted(t)
			for range 2 {
				res, err := mw.DecideFor(ctx, who, "GET", "/", 1)
				if err != nil || !res.Decision.Allowed {
					t.Fatalf("%v %+v", err, res)
				}
				mw.DoneWithStatus(ctx, res, 500)
			}
			res, err := mw.DecideFor(ctx, who, "GET", "/", 1)
			if err != nil || !res.Decision.Allowed {
				t.Fatalf("%v %+v", err, res)
			}
			c.end(mw, res)
			left := remaining(t, mw)
			if left["fails"] != c.fails || left["wins"] != c.wins {
				t.Errorf("fails and wins have %d and %d left, want %d and %d: a request was settled more than once",
					left["fails"], left["wins"], c.fails, c.wins)
			}
		})
	}
}
