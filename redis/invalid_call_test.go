package redis

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
)

// A call the memory store refuses as invalid, having done nothing —
// statuses, receipts or leases not one per check, a negative cost, or a
// limit that cannot be decided among the checks it is to give back to —
// the Redis store refuses
// alike (ErrInvalidCheck), on a Cluster too, where the checks span slots:
// it decides, refunds and releases nothing.
func TestInvalidCallsDoNothingAsOnTheMemoryStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	subj := subjectsBySlot(2, fmt.Sprintf("invalid-%x-", time.Now().UnixNano()))
	fw := sluice.FixedWindow(2, time.Hour).Named("fw")
	conc := sluice.Concurrency(2, time.Hour).Named("conc")
	badWindow := sluice.FixedWindow(0, time.Hour).Named("bad-window")
	badConc := sluice.Concurrency(0, time.Hour).Named("bad-conc")
	type store interface {
		sluice.Store
		sluice.Refunder
		sluice.Releaser
	}
	clock := conformance.NewClock(conformance.DefaultStart)
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	for name, s := range map[string]store{
		"memory":     mem,
		"standalone": New(redistest.Standalone(t).Client(t), WithTimeForTesting(clock.Now), WithTimeout(testTimeout)),
		"cluster":    New(redistest.Cluster(t).Client(t), WithTimeForTesting(clock.Now), WithTimeout(testTimeout)),
	} {
		t.Run(name, func(t *testing.T) {
			checks := []sluice.Check{{Key: subj[0], Limit: fw, Cost: 2}, {Key: subj[0], Limit: conc, Cost: 2}}
			out := make([]sluice.Status, 2)
			if err := s.Apply(ctx, checks, out); err != nil || !out[0].Allowed || !out[1].Allowed {
				t.Fatalf("Apply: %+v, %v; want both admitted", out, err)
			}
			charged, leases := []int64{out[0].Charged, 0}, []int64{0, out[1].Lease}
			for what, err := range map[string]error{
				"Apply with a status too many": s.Apply(ctx, []sluice.Check{{Key: subj[1], Limit: fw, Cost: 1}}, make([]sluice.Status, 2)),
				"Apply with a negative cost": s.Apply(ctx, []sluice.Check{{Key: subj[1], Limit: fw, Cost: 1}, {Key: subj[0], Limit: conc, Cost: -1}},
					make([]sluice.Status, 2)),
				"Refund with a receipt too few":  s.Refund(ctx, checks, charged[:1]),
				"Refund with a receipt too many": s.Refund(ctx, checks, append(charged, 0)),
				"Release with a lease too few":   s.Release(ctx, checks[1:], nil),
				"Release with a lease too many":  s.Release(ctx, checks[1:], leases),
				"Refund with an invalid limit in a later slot": s.Refund(ctx,
					[]sluice.Check{checks[0], {Key: subj[1], Limit: badWindow, Cost: 1}}, []int64{charged[0], 1}),
				"Release with an invalid limit in a later slot": s.Release(ctx,
					[]sluice.Check{checks[1], {Key: subj[1], Limit: badConc, Cost: 1}}, []int64{leases[1], 1}),
			} {
				if !errors.Is(err, sluice.ErrInvalidCheck) {
					t.Errorf("%s: %v, want an error wrapping ErrInvalidCheck", what, err)
				}
			}
			peek := []sluice.Check{{Key: subj[0], Limit: fw}, {Key: subj[0], Limit: conc}, {Key: subj[1], Limit: fw}}
			out = make([]sluice.Status, 3)
			if err := s.Apply(ctx, peek, out); err != nil {
				t.Fatal(err)
			}
			if out[0].Remaining != 0 || out[1].Remaining != 0 || out[2].Remaining != 2 {
				t.Errorf("after the invalid calls, remaining %d, %d and %d; want 0, 0 and 2: nothing refunded, released or charged",
					out[0].Remaining, out[1].Remaining, out[2].Remaining)
			}
		})
	}
}
