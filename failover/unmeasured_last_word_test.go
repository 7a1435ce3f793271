package failover_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// unmeasuredPrimary is a primary that, while odd is set, answers a call
// with a status that measures nothing of the first check's key (Undecided:
// another check refused the call and this one was not evaluated;
// Unavailable: a store below could not be reached and a policy refused;
// NoRoom: no room for its state), the other checks refused by their own
// state.
type unmeasuredPrimary struct {
	sluice.Store
	odd  atomic.Bool
	with sluice.Status
}

func (p *unmeasuredPrimary) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if !p.odd.Load() {
		return p.Store.Apply(ctx, checks, out)
	}
	out[0] = p.with
	for i := 1; i < len(checks); i++ {
		out[i] = sluice.Status{RetryAfter: time.Minute, ResetAfter: time.Minute}
	}
	return nil
}

// A status that measures nothing of the key's use leaves the primary's
// last word on the key as it was: neither replaces nor erases it. An
// Undecided check's "Remaining and ResetAfter (0) are no measure of the
// key's use", an Unavailable one's Remaining tells no state, a refusal for
// want of room counted nothing (sluice.Status). Erased, the primary's word
// that nothing was left of k would have the next fallback start k from a
// whole share, and an instance alone admit the limit again in the same
// fixed window.
func TestAnUnmeasuredStatusLeavesTheKeysLastWord(t *testing.T) {
	for _, tc := range []struct {
		name string
		with sluice.Status
	}{
		{"undecided", sluice.Status{Allowed: true, Undecided: true}},
		{"unavailable", sluice.Status{RetryAfter: time.Second, ResetAfter: time.Second, Unavailable: true}},
		{"no room", sluice.Status{RetryAfter: time.Second, ResetAfter: time.Second, NoRoom: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clk := storetest.NewClock()
			inner := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
			local := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
			defer inner.Close()
			defer local.Close()
			p := &unmeasuredPrimary{Store: inner, with: tc.with}
			flaky := &storetest.Flaky{Next: p}
			f, err := failover.New(flaky, local, failover.Options{OnError: failover.Local, Instances: 1,
				Breaker: failover.BreakerOptions{Clock: clk.Now}})
			if err != nil {
				t.Fatal(err)
			}
			const q = 10
			k := sluice.Check{Key: "k", Limit: sluice.FixedWindow(q, time.Hour), Cost: 1}
			other := sluice.Check{Key: "other", Limit: sluice.FixedWindow(1, time.Hour), Cost: 1}
			admitted := 0
			one := make([]sluice.Status, 1)
			for range q {
				if err := f.Apply(ctx, []sluice.Check{k}, one); err != nil {
					t.Fatal(err)
				}
				if one[0].Allowed {
					admitted++
				}
			}
			if admitted != q || one[0].Remaining != 0 {
				t.Fatalf("the primary admitted %d (last %+v), want %d and nothing left", admitted, one[0], q)
			}
			// A call the primary refuses by another check: k unmeasured.
			p.odd.Store(true)
			two := make([]sluice.Status, 2)
			if err := f.Apply(ctx, []sluice.Check{k, other}, two); err != nil {
				t.Fatal(err)
			}
			p.odd.Store(false)
			// The primary fails within k's window.
			flaky.Fail(storetest.ErrRedisDown)
			clk.Advance(time.Second)
			for range 2 * q {
				if err := f.Apply(ctx, []sluice.Check{k}, one); err != nil {
					t.Fatal(err)
				}
				if one[0].Allowed {
					admitted++
				}
			}
			if admitted > q {
				t.Errorf("one instance admitted %d of k in one window of a fixed window of %d across an outage: "+
					"the %s status erased the primary's word that nothing was left", admitted, q, tc.name)
			}
		})
	}
}
