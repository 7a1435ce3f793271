package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// goRefund is what the Go twin of refund_charge.lua leaves of s.
func goRefund(l sluice.Limit, s sluice.State, at, cost int64) sluice.State {
	p, _ := algo.NewParams(algo.Kind(l.Algorithm()), l.Quantity(), int64(l.Window()/time.Microsecond), l.Burst(), 0)
	if l.Period() != 0 {
		p = algo.NewCalendarParams(l.Quantity(), algo.Period(l.Period()), int64(l.Offset()/time.Microsecond))
	}
	return sluice.State(algo.Refund(&p, algo.State(s), at, cost))
}

// refund_charge.lua is internal/algo.Refund's twin: random charges and
// refunds of random earlier receipts, whole, in part or (against the
// contract) beyond the charge, at random forward times, leave Redis
// deciding exactly as DecideBatch and algo.Refund on the same sequence, receipts
// included.
func TestRefundIsItsGoTwin(t *testing.T) {
	t.Parallel()
	client := redistest.Standalone(t).Client(t)
	ctx := context.Background()
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 22))
		w := time.Duration(1+r.IntN(40)) * time.Millisecond
		q := int64(1 + r.IntN(8))
		// A calendar day whose end falls about halfway through the run
		// (DefaultStart is at noon).
		day := sluice.Calendar(q, sluice.Day).WithOffset(12*time.Hour + 25*w)
		l := []sluice.Limit{sluice.FixedWindow(q, w), sluice.SlidingCounter(q, w), sluice.SlidingLog(q, w), day}[seed%4]
		t.Run(fmt.Sprintf("%s/seed-%d", l, seed), func(t *testing.T) {
			clock := conformance.NewClock(conformance.DefaultStart)
			store := New(client, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
			key := fmt.Sprintf("refund-twin-%d", seed)
			var state sluice.State
			type receipt struct{ at, cost int64 }
			var open []receipt
			for step := range 300 {
				clock.Advance(time.Duration(r.Int64N(int64(w) / 3)))
				if len(open) > 0 && r.IntN(3) == 0 {
					j := r.IntN(len(open))
					rc := open[j]
					open = append(open[:j], open[j+1:]...)
					// All of the charge, or part of it (a reservation
					// settled to what was used).
					back := rc.cost
					switch {
					case rc.cost > 1 && r.IntN(2) == 0:
						back = 1 + r.Int64N(rc.cost-1)
					case r.IntN(4) == 0:
						// More than was charged, which the contract
						// forbids: both stores give back the charge.
						back = rc.cost + 1 + r.Int64N(q)
					}
					c := []sluice.Check{{Key: key, Limit: l, Cost: back}}
					if err := store.Refund(ctx, c, []int64{rc.at}); err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
					state = goRefund(l, state, rc.at, back)
					continue
				}
				c := []sluice.Check{{Key: key, Limit: l, Cost: r.Int64N(q + 1)}}
				want, got := make([]sluice.Status, 1), make([]sluice.Status, 1)
				states := []sluice.State{state}
				if _, err := sluice.DecideBatch(c, states, clock.Micros(), want); err != nil {
					t.Fatal(err)
				}
				state = states[0]
				if err := store.Apply(ctx, c, got); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if got[0] != want[0] {
					t.Fatalf("step %d, cost %d: Redis %+v, Go %+v", step, c[0].Cost, got[0], want[0])
				}
				if want[0].Charged != 0 {
					open = append(open, receipt{want[0].Charged, c[0].Cost})
				}
			}
		})
	}
}

// A call spanning two Cluster slots, refunded, leaves both keys as if never
// charged: one script run per slot.
func TestRefundAcrossSlots(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	store := New(client, WithTimeout(testTimeout))
	lim := sluice.NewLimiter(store)
	subj := subjectsBySlot(2, "refund-")
	user := sluice.SlidingLog(2, time.Hour).Named("user")
	global := sluice.FixedWindow(2, time.Hour).Named("global")
	checks := []sluice.Check{{Key: subj[0], Limit: user, Cost: 1}, {Key: subj[1], Limit: global, Cost: 2}}
	ctx := context.Background()
	var d sluice.Decision
	for i := range 5 {
		if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
			t.Fatalf("call %d: %+v, %v; want admitted, every earlier one refunded", i, d, err)
		}
		if err := lim.Refund(ctx, checks, &d); err != nil {
			t.Fatal(err)
		}
	}
	peek := []sluice.Check{{Key: subj[0], Limit: user}, {Key: subj[1], Limit: global}}
	if err := lim.Allow(ctx, peek, &d); err != nil || d.Statuses[0].Remaining != 2 || d.Statuses[1].Remaining != 2 {
		t.Errorf("after refunds: %+v, %v; want both full", d.Statuses, err)
	}
}
