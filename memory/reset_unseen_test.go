package memory

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
)

// unseenStore returns a store of one shard reading clock, which stands
// still unless the test moves it, and a function applying one check.
func unseenStore(t *testing.T, clock *conformance.Clock, opts ...Option) (*Store, func(key string, l sluice.Limit, cost int64) sluice.Status) {
	t.Helper()
	s := New(append([]Option{WithClock(clock.Now), WithSweepInterval(0), WithShards(1)}, opts...)...)
	t.Cleanup(func() { s.Close() })
	apply := func(key string, l sluice.Limit, cost int64) sluice.Status {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := s.Apply(context.Background(), []sluice.Check{{Key: key, Limit: l, Cost: cost}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	return s, apply
}

// Contract: Reset notes the reset of a limit the store has never decided,
// as the Redis store records it beside the key whatever the key held: the
// state the key builds once the store meets the limit is dated after it.
// In the reset's own µs, a fixed window's charge is not refunded (a
// receipt at or before a reset never is), and a concurrency limit's first
// lease is stamped a µs after the reset.
func TestAResetOfALimitNeverDecidedDatesTheStateBuiltSince(t *testing.T) {
	clock := conformance.NewClock(conformance.DefaultStart)
	s, apply := unseenStore(t, clock)
	at := clock.Micros()

	fw := sluice.FixedWindow(2, time.Hour).Named("fw")
	s.Reset("k", []sluice.Limit{fw})
	charged := apply("k", fw, 1)
	if err := s.Refund(context.Background(), []sluice.Check{{Key: "k", Limit: fw, Cost: 1}}, []int64{charged.Charged}); err != nil {
		t.Fatal(err)
	}
	if st := apply("k", fw, 2); st.Allowed {
		t.Errorf("a charge in the reset's µs was refunded: 2 more of 2 admitted (%+v)", st)
	}

	conc := sluice.Concurrency(2, time.Hour).Named("conc")
	s.Reset("k", []sluice.Limit{conc})
	if st := apply("k", conc, 1); st.Lease != at+1 {
		t.Errorf("the first lease after the reset at µs %d is stamped %d, want %d", at, st.Lease, at+1)
	}
}

// Contract: a Reset before sluice.Epoch, where times are negative µs, is
// noted at its own time, not at Epoch: the first lease taken since is
// stamped a µs after it, so that a Concurrency(1, 1s) slot is free again
// 2 s later, not held until a second after Epoch.
func TestAResetBeforeEpochIsNotedAtItsOwnTime(t *testing.T) {
	clock := conformance.NewClock(sluice.Epoch.Add(-time.Hour))
	s, apply := unseenStore(t, clock)
	at := clock.Micros()
	conc := sluice.Concurrency(1, time.Second).Named("conc")
	apply("k", conc, 0)
	s.Reset("k", []sluice.Limit{conc})
	if st := apply("k", conc, 1); st.Lease != at+1 {
		t.Errorf("the first lease after the reset at µs %d is stamped %d, want %d", at, st.Lease, at+1)
	}
	clock.Advance(2 * time.Second)
	if st := apply("k", conc, 1); !st.Allowed {
		t.Errorf("a slot whose lease of 1 s expired is held 2 s later: %+v", st)
	}
}

// Contract: Resets of limits the store never decides fill neither the
// registry (WithMaxLimits) nor the notes of the limits it decides: after
// a flood of them on one shard, a limit it has not met yet is still
// decided, and a decided limit's Reset is still remembered (a charge in
// its µs is not refunded).
func TestResetsOfLimitsNeverDecidedFillNeitherTheRegistryNorTheNotesOfDecidedOnes(t *testing.T) {
	clock := conformance.NewClock(conformance.DefaultStart)
	s, apply := unseenStore(t, clock, WithMaxLimits(2))
	fw := sluice.FixedWindow(2, time.Hour).Named("fw")
	apply("k", fw, 0)
	s.Reset("k", []sluice.Limit{fw})
	madeUp := make([]sluice.Limit, 4*maxResetsPerShard)
	for i := range madeUp {
		madeUp[i] = sluice.FixedWindow(2, time.Hour).Named(fmt.Sprintf("made-up-%d", i))
	}
	s.Reset("k", madeUp)
	s.Reset("other", madeUp)
	if n := len(s.shards[0].unseen); n > maxResetsPerShard {
		t.Errorf("%d notes of limits never decided held, over the bound of %d", n, maxResetsPerShard)
	}

	charged := apply("k", fw, 1)
	if err := s.Refund(context.Background(), []sluice.Check{{Key: "k", Limit: fw, Cost: 1}}, []int64{charged.Charged}); err != nil {
		t.Fatal(err)
	}
	if st := apply("k", fw, 2); st.Allowed {
		t.Errorf("the decided limit's Reset was forgotten: a charge in its µs was refunded (%+v)", st)
	}
	out := make([]sluice.Status, 1)
	if err := s.Apply(context.Background(), []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1, time.Hour).Named("second"), Cost: 1}}, out); err != nil {
		t.Errorf("a second limit refused by a store that may know 2: %v", err)
	}
}
