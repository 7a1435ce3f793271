package memory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/memory"
)

// Each refunded admission is given back at once, so a client whose every
// request is refunded keeps its whole quota; a charge refunded after its
// window has gone gives back nothing, and a bucket in the same call is not
// refunded.
func TestRefund(t *testing.T) {
	ctx := context.Background()
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(3, time.Second),
		sluice.SlidingCounter(3, time.Second),
		sluice.SlidingLog(3, time.Second),
	} {
		t.Run(l.Algorithm().String(), func(t *testing.T) {
			clock := conformance.NewClock(conformance.DefaultStart)
			lim := sluice.NewLimiter(memory.New(memory.WithSweepInterval(0), memory.WithClock(clock.Now)))
			bucket := sluice.TokenBucket(20, time.Second).Named("bucket")
			checks := []sluice.Check{{Key: "k", Limit: l, Cost: 1}, {Key: "k", Limit: bucket, Cost: 1}}
			var d sluice.Decision
			for i := range 10 {
				clock.Advance(time.Millisecond)
				if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
					t.Fatalf("call %d: %+v, %v; want admitted, every earlier one refunded", i, d, err)
				}
				if err := lim.Refund(ctx, checks, &d); err != nil {
					t.Fatal(err)
				}
			}
			if err := lim.Allow(ctx, []sluice.Check{{Key: "k", Limit: l}, {Key: "k", Limit: bucket}}, &d); err != nil ||
				d.Statuses[0].Remaining != 3 || d.Statuses[1].Remaining != 10 {
				t.Fatalf("after 10 refunded calls: %+v, %v; want %v full, 10 units spent from the bucket", d.Statuses, err, l.Algorithm())
			}

			// Charged in one window, refunded two windows later: the charge
			// is no longer counted, and nothing is given back.
			one := checks[:1]
			for range 3 {
				if err := lim.Allow(ctx, one, &d); err != nil || !d.Allowed {
					t.Fatalf("%+v, %v", d, err)
				}
			}
			late := d
			late.Statuses = append([]sluice.Status(nil), d.Statuses...)
			clock.Advance(2 * time.Second)
			if err := lim.Allow(ctx, []sluice.Check{{Key: "k", Limit: l, Cost: 3}}, &d); err != nil || !d.Allowed {
				t.Fatalf("a new window: %+v, %v", d, err)
			}
			if err := lim.Refund(ctx, one, &late); err != nil {
				t.Fatal(err)
			}
			if err := lim.Allow(ctx, one, &d); err != nil || d.Allowed {
				t.Errorf("a refund of a charge two windows old gave back quota: %+v, %v", d, err)
			}
		})
	}
}

// A refund under a limit that cannot be decided (here a window of 0, of
// the ID and algorithm of a limit the store holds a state of) is an error
// wrapping sluice.ErrInvalidCheck, as the Redis store's is, and gives back
// nothing; it never panics.
func TestRefundUnderAnInvalidLimitIsAnError(t *testing.T) {
	ctx := context.Background()
	store := memory.New(memory.WithSweepInterval(0), memory.WithClock(conformance.NewClock(conformance.DefaultStart).Now))
	defer store.Close()
	good := sluice.FixedWindow(3, time.Minute).Named("w")
	out := make([]sluice.Status, 1)
	if err := store.Apply(ctx, []sluice.Check{{Key: "k", Limit: good, Cost: 3}}, out); err != nil || !out[0].Allowed {
		t.Fatalf("%+v, %v", out[0], err)
	}
	charged := out[0].Charged
	for _, bad := range []sluice.Limit{
		sluice.FixedWindow(3, 0).Named("w"),
		sluice.FixedWindow(0, time.Minute).Named("w"),
		sluice.SlidingCounter(3, 0).Named("w").WithID("w"),
	} {
		err := store.Refund(ctx, []sluice.Check{{Key: "k", Limit: bad, Cost: 3}}, []int64{charged})
		if !errors.Is(err, sluice.ErrInvalidCheck) {
			t.Errorf("refund under %v: %v, want an error wrapping ErrInvalidCheck", bad, err)
		}
	}
	if err := store.Apply(ctx, []sluice.Check{{Key: "k", Limit: good}}, out); err != nil || out[0].Remaining != 0 {
		t.Errorf("after refunds under invalid limits: %+v, %v; want nothing given back", out[0], err)
	}
}
