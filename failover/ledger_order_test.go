package failover_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// opposingCharges runs one recovery in which two calls charge the same two owed
// keys in opposite orders while a third call's charge holds the first key.
// It returns how long the two calls took after the third's charge ended,
// and the Store's stats.
func opposingCharges(t *testing.T, bFirst bool, timeout time.Duration) (time.Duration, failover.Stats) {
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	local := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { remote.Close(); local.Close() })
	primary := &storetest.Flaky{Next: remote}
	var block atomic.Bool
	entered := make(chan struct{})
	gate := make(chan struct{})
	charge := func(ctx context.Context, checks []sluice.Check, ids []string) error {
		if err := primary.Err(); err != nil {
			return err
		}
		if block.CompareAndSwap(true, false) {
			close(entered)
			<-gate
			return errors.New("charge: i/o timeout") // in doubt: X's account stays open
		}
		for _, c := range checks {
			out := make([]sluice.Status, 1)
			if err := remote.Apply(ctx, []sluice.Check{{Key: c.Key, Limit: c.Limit}}, out); err != nil {
				return err
			}
			if take := min(c.Cost, out[0].Remaining); take > 0 {
				if err := remote.Apply(ctx, []sluice.Check{{Key: c.Key, Limit: c.Limit, Cost: take}}, out); err != nil {
					return err
				}
			}
		}
		return nil
	}
	f, err := failover.New(primary, local, failover.Options{
		Timeout:    timeout,
		Node:       func(c *sluice.Check) string { return c.Key[:1] },
		ChargeOnce: charge,
		Breaker:    failover.BreakerOptions{Clock: clk.Now},
	})
	if err != nil {
		t.Fatal(err)
	}
	l := sluice.FixedWindow(1000, time.Hour)
	X := sluice.Check{Key: "a1", Limit: l, Cost: 1}
	Y := sluice.Check{Key: "b1", Limit: l, Cost: 1}
	ctx := context.Background()
	apply := func(cs ...sluice.Check) error {
		return f.Apply(ctx, cs, make([]sluice.Status, len(cs)))
	}
	primary.Fail(errors.New("down"))
	if err := apply(X); err != nil {
		t.Fatal(err)
	}
	if err := apply(Y); err != nil {
		t.Fatal(err)
	}
	primary.Fail(nil)

	block.Store(true)
	cDone := make(chan error, 1)
	go func() { cDone <- apply(X) }() // holds X's account in its charge
	<-entered
	done := make(chan error, 2)
	first, second := []sluice.Check{X, Y}, []sluice.Check{Y, X}
	if bFirst {
		first, second = second, first
	}
	go func() { done <- apply(first...) }()
	time.Sleep(50 * time.Millisecond)
	go func() { done <- apply(second...) }()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	close(gate)
	if err := <-cDone; err != nil { // decided by the fallback
		t.Fatal(err)
	}
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			return time.Since(start), f.Stats() // still waiting
		}
	}
	return time.Since(start), f.Stats()
}

// Two calls that charge the same owed keys in opposite orders — [X, Y] and
// [Y, X], both valid calls — do not wait for each other: a call claims its
// accounts together, once no other call charges any of them (ledger.take),
// never waiting while it holds some. The scene needs X's account to outlive
// the charge that held it (that charge failed: X stays in doubt, as
// Options.ChargeOnce describes). Had they waited for each other, one would
// fail at its timeout on a primary that answers at once, counted as a
// store error and decided by the fallback.
func TestOppositeOrderChargesDoNotWaitForEachOther(t *testing.T) {
	for trial := range 6 {
		took, st := opposingCharges(t, trial%2 == 0, 3*time.Second)
		t.Logf("trial %d: %v, StoreErrors %d, FallbackDecisions %d", trial, took, st.StoreErrors, st.FallbackDecisions)
		if took > 2*time.Second || st.StoreErrors != 3 {
			t.Fatalf("trial %d: the two calls took %v after the charge holding X ended; stats %+v: want at once, and only 3 store errors (the outage's 2, the failed charge)", trial, took, st)
		}
	}
}

// The same with Timeout negative and no ChargeTimeout ("no bound of its
// own"), where nothing but the callers would end a mutual wait.
func TestOppositeOrderChargesDoNotWaitWithoutATimeout(t *testing.T) {
	for trial := range 2 {
		took, st := opposingCharges(t, trial%2 == 0, -1)
		t.Logf("trial %d: %v, stats %+v", trial, took, st)
		if took > 2*time.Second {
			t.Fatalf("trial %d: the two calls still waited %v after the charge holding X ended, on a primary that answers at once", trial, took)
		}
	}
}
