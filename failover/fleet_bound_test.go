package failover_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// A fleet is n Stores under OnError Local over one flaky primary (a memory
// store), each with a local memory store of its own and a Charge, all on
// one manual clock: instances of sluice sharing one Redis.
type fleet struct {
	clk     *storetest.Clock
	remote  *memory.Store
	primary *storetest.Flaky   // fails every instance's calls
	own     []*storetest.Flaky // fails one instance's calls (a partition)
	stores  []*failover.Store
}

func newFleet(t *testing.T, n int) *fleet {
	t.Helper()
	fl := &fleet{clk: storetest.NewClock()}
	fl.remote = memory.New(memory.WithClock(fl.clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { fl.remote.Close() })
	fl.primary = &storetest.Flaky{Next: fl.remote}
	for range n {
		local := memory.New(memory.WithClock(fl.clk.Now), memory.WithSweepInterval(0))
		t.Cleanup(func() { local.Close() })
		own := &storetest.Flaky{Next: fl.primary}
		fl.own = append(fl.own, own)
		fl.stores = append(fl.stores, mustFailover(refundable{own, fl.remote}, local, failover.Options{
			Instances: n,
			Breaker:   failover.BreakerOptions{Clock: fl.clk.Now},
			Charge: func(ctx context.Context, checks []sluice.Check) error {
				if err := own.Err(); err != nil {
					return err
				}
				return fl.charge(ctx, checks)
			},
		}))
	}
	return fl
}

// charge takes up to each check's Cost of what the primary has left,
// unless the primary fails.
func (fl *fleet) charge(ctx context.Context, checks []sluice.Check) error {
	if err := fl.primary.Err(); err != nil {
		return err
	}
	for _, c := range checks {
		out := make([]sluice.Status, 1)
		peek := []sluice.Check{{Key: c.Key, Limit: c.Limit}}
		if err := fl.remote.Apply(ctx, peek, out); err != nil {
			return err
		}
		if take := min(c.Cost, out[0].Remaining); take > 0 {
			peek[0].Cost = take
			if err := fl.remote.Apply(ctx, peek, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// round has callers[i] goroutines on instance i make one call of check
// each, at the clock's present instant, refunding every refundEvery-th
// admission at once; it returns the units admitted and not refunded.
func (fl *fleet) round(t *testing.T, check sluice.Check, callers []int, refundEvery int) int64 {
	var net, seq atomic.Int64
	var wg sync.WaitGroup
	for i, s := range fl.stores {
		for range callers[i] {
			wg.Go(func() {
				checks := []sluice.Check{check}
				out := make([]sluice.Status, 1)
				if err := s.Apply(context.Background(), checks, out); err != nil {
					t.Error(err)
					return
				}
				if !out[0].Allowed {
					return
				}
				if refundEvery > 0 && seq.Add(1)%int64(refundEvery) == 0 {
					if err := s.Refund(context.Background(), checks, []int64{out[0].Charged}); err == nil {
						return
					}
				}
				net.Add(check.Cost)
			})
		}
	}
	wg.Wait()
	return net.Load()
}

// Instances sharing a primary that fails mid-window and comes back at a
// window's boundary admit, per window, at most the limit, plus in the
// window of the failure what each could not know of the others (at most
// n−1 shares): the bound package redis states (Failover) for fixed
// windows, here with concurrent callers on every instance and refunds,
// local ones among them, whose units the recovery charge must not charge.
func TestAFleetAdmitsWithinTheStatedBoundAcrossAnOutage(t *testing.T) {
	const (
		n    = 3
		q    = 30
		w    = time.Second
		step = 50 * time.Millisecond
	)
	for _, tc := range []struct {
		name        string
		down, up    time.Duration // from the start, on the clock
		refundEvery int
		callers     []int
	}{
		{"mid-window, back at a boundary", 1350 * time.Millisecond, 4 * w, 0, []int{1, 1, 1}},
		{"mid-window, back mid-window", 1350 * time.Millisecond, 4*w + 700*time.Millisecond, 0, []int{1, 1, 1}},
		{"at a boundary, back just before one", 2 * w, 5*w - step, 0, []int{1, 1, 1}},
		{"a short blip", 1900 * time.Millisecond, 2050 * time.Millisecond, 0, []int{1, 1, 1}},
		{"refunds", 1350 * time.Millisecond, 4 * w, 3, []int{1, 1, 1}},
		{"one busy instance", 1350 * time.Millisecond, 4 * w, 0, []int{3, 1, 0}},
		{"one busy instance, refunds", 1350 * time.Millisecond, 4*w + 700*time.Millisecond, 2, []int{3, 1, 1}},
		{"busy, a short blip", 1900 * time.Millisecond, 2050 * time.Millisecond, 0, []int{4, 2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fl := newFleet(t, n)
			check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(q, w), Cost: 1}
			per := map[int64]int64{}
			failWindow := int64(tc.down / w)
			for at := time.Duration(0); at < 9*w; at += step {
				switch at {
				case tc.down:
					fl.primary.Fail(errors.New("down"))
				case tc.up:
					fl.primary.Fail(nil)
				}
				per[int64(at/w)] += fl.round(t, check, tc.callers, tc.refundEvery)
				fl.clk.Advance(step)
			}
			for win := int64(0); win < 9; win++ {
				bound := int64(q)
				if win == failWindow {
					bound += (n - 1) * (q / n)
				}
				if per[win] > bound {
					t.Errorf("window %d: %d admitted, bound %d (limit %d)", win, per[win], bound, q)
				}
			}
			t.Log(fmt.Sprint(per))
		})
	}
}

// Concurrency leases are never charged: the bound package redis states is
// Q + n·max(⌊Q/n⌋, 1) units in flight while the primary is out and for one lease
// time after it returns. Leases held on the primary before, taken locally
// during the outage and asked for through the return period and after:
// never more in flight than that.
func TestAFleetHoldsWithinTheStatedLeaseBoundAcrossAnOutage(t *testing.T) {
	const (
		n    = 3
		q    = 7
		step = 50 * time.Millisecond
	)
	fl := newFleet(t, n)
	check := sluice.Check{Key: "k", Limit: sluice.Concurrency(q, time.Minute), Cost: 1}
	held := 0
	acquire := func() {
		for _, s := range fl.stores {
			for range 3 {
				out := make([]sluice.Status, 1)
				if err := s.Apply(context.Background(), []sluice.Check{check}, out); err != nil {
					t.Fatal(err)
				}
				if out[0].Allowed {
					held++
				}
			}
		}
	}
	most := 0
	for at := time.Duration(0); at < 6*time.Second; at += step {
		switch at {
		case time.Second:
			fl.primary.Fail(errors.New("down"))
		case 3 * time.Second:
			fl.primary.Fail(nil)
		}
		acquire()
		most = max(most, held)
		fl.clk.Advance(step)
	}
	if bound := q + n*max(q/n, 1); most > bound {
		t.Errorf("%d leases in flight, bound %d (limit %d)", most, bound, q)
	}
	t.Logf("at most %d in flight (limit %d, bound %d)", most, q, q+n*max(q/n, 1))
}

// The same attack on a sliding log, whose promise holds in every window
// (t−W, t]: at most the limit in each, plus n−1 shares in those that hold
// the failure.
func TestAFleetOnASlidingLogAdmitsWithinTheStatedBound(t *testing.T) {
	const (
		n    = 3
		q    = 30
		w    = time.Second
		step = 50 * time.Millisecond
		per  = int(w / step)
	)
	for _, tc := range []struct {
		name     string
		down, up time.Duration
		callers  []int
	}{
		{"mid-window, back later", 1350 * time.Millisecond, 4*w + 200*time.Millisecond, []int{1, 1, 1}},
		{"one busy instance", 1350 * time.Millisecond, 3*w + 700*time.Millisecond, []int{3, 1, 0}},
		{"a short blip", 1900 * time.Millisecond, 2050 * time.Millisecond, []int{4, 2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fl := newFleet(t, n)
			check := sluice.Check{Key: "k", Limit: sluice.SlidingLog(q, w), Cost: 1}
			var adm []int64
			for at := time.Duration(0); at < 9*w; at += step {
				switch at {
				case tc.down:
					fl.primary.Fail(errors.New("down"))
				case tc.up:
					fl.primary.Fail(nil)
				}
				adm = append(adm, fl.round(t, check, tc.callers, 0))
				fl.clk.Advance(step)
			}
			failStep := int(tc.down / step)
			most := int64(0)
			for end := range adm {
				sum := int64(0)
				for i := max(0, end-per+1); i <= end; i++ {
					sum += adm[i]
				}
				bound := int64(q)
				if end-per < failStep && failStep <= end {
					bound += (n - 1) * (q / n)
				}
				if sum > bound {
					t.Errorf("the window ending at step %d: %d admitted, bound %d (limit %d)", end, sum, bound, q)
				}
				most = max(most, sum)
			}
			t.Logf("at most %d in a window (limit %d)", most, q)
		})
	}
}

// An instance cut off from the primary for longer than the others (its
// probes keep failing) goes on deciding by its share after they are back:
// the stated bound is then the limit plus that share in the windows in
// which it decides alone, and the limit again once it has returned.
func TestAFleetWithAnInstanceCutOffLongerAdmitsWithinTheStatedBound(t *testing.T) {
	const (
		n    = 3
		q    = 30
		w    = time.Second
		step = 50 * time.Millisecond
	)
	fl := newFleet(t, n)
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(q, w), Cost: 1}
	per := map[int64]int64{}
	const down, up, late = 1350 * time.Millisecond, 3 * w, 5*w + 500*time.Millisecond
	for at := time.Duration(0); at < 10*w; at += step {
		switch at {
		case down:
			fl.primary.Fail(errors.New("down"))
		case up:
			fl.primary.Fail(nil)
			fl.own[2].Fail(errors.New("cut off"))
		case late:
			fl.own[2].Fail(nil)
		}
		per[int64(at/w)] += fl.round(t, check, []int{1, 1, 2}, 0)
		fl.clk.Advance(step)
	}
	for win := int64(0); win < 10; win++ {
		bound := int64(q)
		switch {
		case win == int64(down/w):
			bound += (n - 1) * (q / n)
		case win >= int64(up/w) && win <= int64(late/w):
			bound += q / n
		}
		if per[win] > bound {
			t.Errorf("window %d: %d admitted, bound %d (limit %d)", win, per[win], bound, q)
		}
	}
	t.Log(per)
}
