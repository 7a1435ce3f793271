package redis

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
)

// The refund of a cross-slot bucket reservation the bucket's tag no longer
// records gives back its units less the refill between the reservation and
// the state's last write (bucket.undo). After the store's clock stepped
// back, that write may be dated before a write that had already refilled
// the reservation away (the bucket without it full again), and the refund
// gives back units that had refilled to the reservation alone: at most the
// reservation's cost, and at most the refill over the step (the package
// doc, "Checks that span slots"; docs/decisions.md). The memory store, where
// the refused call never ran, under the same clock is the truth the
// excess is measured against.
func TestAnUnrecordedBucketRefundAfterAStepBackGivesBackAtMostTheRefillOverTheStep(t *testing.T) {
	cl := redistest.Cluster(t)
	plain := cl.Client(t)
	for _, global := range []sluice.Limit{ // 1 a second, burst 5
		sluice.TokenBucket(5, 5*time.Second),
		sluice.GCRA(5, 5*time.Second),
		sluice.LeakyBucket(5, 5*time.Second),
	} {
		for _, c := range []struct {
			cost int64
			step time.Duration
		}{
			{1, 3 * time.Second}, // bound: the cost
			{3, time.Second},     // bound: the refill over the step
		} {
			name := "sb-" + global.Algorithm().String() + "-" + strconv.FormatInt(c.cost, 10)
			t.Run(name, func(t *testing.T) { unrecordedRefundAfterStepBack(t, plain, global.Named(name), c.cost, c.step) })
		}
	}
}

func unrecordedRefundAfterStepBack(t *testing.T, plain rueidis.Client, global sluice.Limit, cost int64, step time.Duration) {
	ctx := context.Background()
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
	user := sluice.FixedWindow(1, time.Hour).Named("user")
	gslot := slot(Key("global", global.Name()))
	var victim string
	for i := 0; victim == ""; i++ {
		if u := global.Name() + "-victim-" + strconv.Itoa(i); slot(Key(u, "user")) > gslot {
			victim = u // its global slot is reserved first
		}
	}
	both := func(u string, cost int64) []sluice.Check {
		return []sluice.Check{{Key: "global", Limit: global, Cost: cost}, {Key: u, Limit: user, Cost: 1}}
	}
	other := New(plain, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
	truth := memory.New(memory.WithClock(clock.Now))
	decide := func(s sluice.Store, checks []sluice.Check) sluice.Decision {
		t.Helper()
		var d sluice.Decision
		if err := sluice.NewLimiter(s).Allow(ctx, checks, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The victim has spent its own unit of the hour (its user key only).
	for _, s := range []sluice.Store{other, truth} {
		if d := decide(s, both(victim, cost)[1:]); !d.Allowed {
			t.Fatalf("victim's own unit: %+v", d)
		}
	}
	// Its next call reserves cost global units at T, then its user slot
	// refuses it. In between: at T+3 s a call (the reservation refilled
	// away: the bucket without it is full again, and its record goes),
	// then the store's clock steps back and a call at T+3 s-step.
	const ahead = 3 * time.Second
	between := func(s sluice.Store) {
		clock.Advance(ahead)
		if d := decide(s, both(global.Name()+"-a", 1)); !d.Allowed {
			t.Errorf("call at T+3s: %+v", d)
		}
		clock.Advance(-step)
		if d := decide(s, both(global.Name()+"-b", 1)); !d.Allowed {
			t.Errorf("call after the step back: %+v", d)
		}
	}
	hooked := &hookClient{Client: plain, key: Key(victim, "user"), hook: func() { between(other) }}
	vs := New(hooked, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
	if d := decide(vs, both(victim, cost)); d.Allowed {
		t.Fatalf("victim's second call admitted: %+v", d)
	}
	clock.Advance(step - ahead)
	between(truth) // the refused call never ran
	peek := []sluice.Check{{Key: "global", Limit: global, Cost: 0}}
	want, got := make([]sluice.Status, 1), make([]sluice.Status, 1)
	if err := truth.Apply(ctx, peek, want); err != nil {
		t.Fatal(err)
	}
	if err := other.Apply(ctx, peek, got); err != nil {
		t.Fatal(err)
	}
	refill := int64(step / time.Second) // 1 unit a second
	bound := min(cost, refill)
	if excess := got[0].Remaining - want[0].Remaining; excess > bound {
		t.Errorf("global bucket: %d left on Redis after the refused call's refund, %d on the memory store where it never ran: %d unit(s) beyond the limit, more than the bound %d (a cost of %d, a step of %v) (unrefunded=%d)",
			got[0].Remaining, want[0].Remaining, excess, bound, cost, step, vs.Unrefunded())
	}
}
