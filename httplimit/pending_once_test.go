package httplimit_test

import (
	"context"
	"net/netip"
	"sync"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// A kept decision is settled once, whatever its caller does with the
// Result and the Pending and in whatever order: a "fails" limit (counting
// only failures) charged for a request answered 200 gets that request
// back once, never twice.
func TestPendingRefundsOnce(t *testing.T) {
	ctx := context.Background()
	who := httplimit.Requester{IP: netip.MustParseAddr("192.0.2.1")}
	orders := map[string]func(mw *httplimit.Middleware, res *httplimit.Result){
		"Keep, DoneWithStatus, Settle": func(mw *httplimit.Middleware, res *httplimit.Result) {
			p := mw.Keep(res)
			mw.DoneWithStatus(ctx, res, 200)
			p.Settle(ctx, 200, nil)
		},
		"Keep, Settle, DoneWithStatus": func(mw *httplimit.Middleware, res *httplimit.Result) {
			p := mw.Keep(res)
			p.Settle(ctx, 200, nil)
			mw.DoneWithStatus(ctx, res, 200)
		},
		"Keep twice, Settle both": func(mw *httplimit.Middleware, res *httplimit.Result) {
			p, q := mw.Keep(res), mw.Keep(res)
			mw.Done(ctx, res)
			p.Settle(ctx, 200, nil)
			q.Settle(ctx, 200, nil)
		},
		"Settle twice at once": func(mw *httplimit.Middleware, res *httplimit.Result) {
			p := mw.Keep(res)
			mw.Done(ctx, res)
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					if err := p.Settle(ctx, 200, nil); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		},
	}
	for name, settle := range orders {
		t.Run(name, func(t *testing.T) {
			mw := counted(t)
			for range 2 { // two failures, counted: 1 of 3 left
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
			settle(mw, res)
			if got := remaining(t, mw)["fails"]; got != 1 {
				t.Errorf("fails has %d left after two failures and one success, want 1", got)
			}
		})
	}
}

// A Pending encoded after it was settled carries no charge: no instance
// takes it for a settlement.
func TestASettledPendingEncodesNoCharge(t *testing.T) {
	ctx := context.Background()
	mw := counted(t)
	res, err := mw.DecideFor(ctx, httplimit.Requester{IP: netip.MustParseAddr("192.0.2.1")}, "GET", "/", 1)
	if err != nil || !res.Decision.Allowed {
		t.Fatalf("%v %+v", err, res)
	}
	p := mw.Keep(res)
	mw.Discard(res)
	if err := p.Settle(ctx, 200, nil); err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if q, err := mw.UnmarshalPending(b); err == nil {
		q.Settle(ctx, 200, nil)
		t.Errorf("a settled Pending encoded %s, which decodes (fails has %d left)", b, remaining(t, mw)["fails"])
	}
}
