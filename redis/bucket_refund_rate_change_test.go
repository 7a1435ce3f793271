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

// A bucket's pending record (bucket.lua, pending) holds ticks of the rate
// that wrote it. Across a rolling reload that changes the rate (10/10s,
// rq 1, to 30/10s, rq 3: a µs of refill is 1 tick or 3), a write under the
// new rate forgets the record, so that once a write under the old rate (an
// instance not yet reloaded) sets the state's rate back, the refund of a
// reservation made before does not give back its D in ticks the new rate
// has since capped and extended: it gives back what the bucket misses
// because of it, measured in time, and leaves the bucket as the memory
// store's, where the refused call never ran, under the same clock and
// limits.
func TestABucketRefundAfterARateChangeLeavesItAsIfNeverTaken(t *testing.T) {
	cl := redistest.Cluster(t)
	plain := cl.Client(t)
	for _, rates := range [][2]sluice.Limit{
		{sluice.TokenBucket(10, 10*time.Second), sluice.TokenBucket(30, 10*time.Second)},
		{sluice.GCRA(10, 10*time.Second), sluice.GCRA(30, 10*time.Second)},
		{sluice.LeakyBucket(10, 10*time.Second), sluice.LeakyBucket(30, 10*time.Second)},
	} {
		name := "rate-" + rates[0].Algorithm().String()
		t.Run(name, func(t *testing.T) {
			refundAfterRateChange(t, plain, rates[0].Named(name), rates[1].Named(name))
		})
	}
}

func refundAfterRateChange(t *testing.T, plain rueidis.Client, oldRate, newRate sluice.Limit) {
	ctx := context.Background()
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
	user := sluice.FixedWindow(1, time.Hour).Named("user")
	gslot := slot(Key("global", oldRate.Name()))
	var victim string
	for i := 0; victim == ""; i++ {
		if u := oldRate.Name() + "-victim-" + strconv.Itoa(i); slot(Key(u, "user")) > gslot {
			victim = u // its global slot is reserved first
		}
	}
	other := New(plain, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
	truth := memory.New(memory.WithClock(clock.Now))
	decide := func(s sluice.Store, checks ...sluice.Check) sluice.Decision {
		t.Helper()
		var d sluice.Decision
		if err := sluice.NewLimiter(s).Allow(ctx, checks, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	g := func(l sluice.Limit) sluice.Check { return sluice.Check{Key: "global", Limit: l, Cost: 1} }
	victimOwn := sluice.Check{Key: victim, Limit: user, Cost: 1}
	for _, s := range []sluice.Store{other, truth} {
		if d := decide(s, victimOwn); !d.Allowed {
			t.Fatalf("victim's own unit: %+v", d)
		}
	}
	// At T the victim's call (old rate) reserves a global unit (1 s of
	// refill) and its user slot refuses it. Between the two, at T+0.7 s: an
	// instance reloaded to the new rate admits a call, then one not yet
	// reloaded admits a call under the old rate.
	between := func(s sluice.Store) {
		clock.Advance(700 * time.Millisecond)
		if d := decide(s, g(newRate)); !d.Allowed {
			t.Errorf("call under the new rate: %+v", d)
		}
		if d := decide(s, g(oldRate)); !d.Allowed {
			t.Errorf("call under the old rate: %+v", d)
		}
	}
	hooked := &hookClient{Client: plain, key: Key(victim, "user"), hook: func() { between(other) }}
	vs := New(hooked, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
	if d := decide(vs, g(oldRate), victimOwn); d.Allowed {
		t.Fatalf("victim's second call admitted: %+v", d)
	}
	clock.Advance(-700 * time.Millisecond)
	between(truth) // the refused call never ran
	for _, l := range []sluice.Limit{newRate, oldRate} {
		peek := []sluice.Check{{Key: "global", Limit: l, Cost: 0}}
		want, got := make([]sluice.Status, 1), make([]sluice.Status, 1)
		if err := truth.Apply(ctx, peek, want); err != nil {
			t.Fatal(err)
		}
		if err := other.Apply(ctx, peek, got); err != nil {
			t.Fatal(err)
		}
		if got[0].Remaining != want[0].Remaining || got[0].ResetAfter != want[0].ResetAfter {
			t.Errorf("global bucket under %v: %d left, full in %v on Redis after the refused call's refund; %d, full in %v on the memory store where it never ran (unrefunded=%d)",
				l, got[0].Remaining, got[0].ResetAfter, want[0].Remaining, want[0].ResetAfter, vs.Unrefunded())
		}
	}
}
