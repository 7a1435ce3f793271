package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/memory"
)

// A state past its expiry is a state the store no longer holds, whether or
// not the sweep has run (here it never does), as a Redis key past its TTL
// is gone: docs/decisions.md, "a state no call meets between the reload
// and its old expiry is forgotten then". A client spends 3 of 3/s, and no
// call meets the state until 2.5 s later (past the expiry, which the store
// keeps in whole seconds, rounded up), when the limit of its ID counts 3 an
// hour; whatever meets it first — a call decided holding its key's entry
// (a fixed window, inline) or under the shard's mutex (a sliding log,
// beside the entry), a call refused reading it, a refund or release of a
// receipt or lease it counted, a Reset — finds it gone, and the next call
// under the hour's limit finds its full quota.
func TestAStatePastItsExpiryIsForgottenWhateverMeetsItFirst(t *testing.T) {
	ctx := context.Background()
	type meeting func(t *testing.T, s *memory.Store, old, cur sluice.Limit, first sluice.Status)
	apply := func(t *testing.T, s *memory.Store, l sluice.Limit, cost int64) sluice.Status {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := s.Apply(ctx, []sluice.Check{{Key: "client", Limit: l, Cost: cost}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	var (
		// A call under cur refused, reading the state as a fresh one,
		// keeps none.
		refuse meeting = func(t *testing.T, s *memory.Store, _, cur sluice.Limit, _ sluice.Status) {
			if st := apply(t, s, cur, 4); st.Allowed {
				t.Fatalf("4 of 3 admitted: %+v", st)
			}
		}
		// The first charge refunded, or lease given back, under the
		// limit that made it: nothing to give back.
		refund meeting = func(t *testing.T, s *memory.Store, old, _ sluice.Limit, first sluice.Status) {
			if err := s.Refund(ctx, []sluice.Check{{Key: "client", Limit: old, Cost: 2}}, []int64{first.Charged}); err != nil {
				t.Fatal(err)
			}
		}
		release meeting = func(t *testing.T, s *memory.Store, old, _ sluice.Limit, first sluice.Status) {
			if err := s.Release(ctx, []sluice.Check{{Key: "client", Limit: old, Cost: 2}}, []int64{first.Lease}); err != nil {
				t.Fatal(err)
			}
		}
		// A Reset forgets no state the store holds, as a Redis key past
		// its TTL is none.
		reset meeting = func(t *testing.T, s *memory.Store, old, _ sluice.Limit, _ sluice.Status) {
			if n := s.Reset("client", []sluice.Limit{old}); n != 0 {
				t.Errorf("Reset forgot %d states, want 0: the one it held had expired", n)
			}
		}
	)
	for _, tc := range []struct {
		name  string
		limit func(quantity int64, window time.Duration) sluice.Limit
		meet  meeting
	}{
		{"fixed window met by a call", sluice.FixedWindow, nil},
		{"sliding log met by a call", sluice.SlidingLog, nil},
		{"fixed window met by a refusal", sluice.FixedWindow, refuse},
		{"sliding log met by a refusal", sluice.SlidingLog, refuse},
		{"fixed window met by a refund", sluice.FixedWindow, refund},
		{"sliding log met by a refund", sluice.SlidingLog, refund},
		{"lease book met by a release", sluice.Concurrency, release},
		{"fixed window met by a reset", sluice.FixedWindow, reset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := conformance.NewClock(time.Date(2026, 1, 5, 10, 0, 1, 0, time.UTC)) // an hour's start, and a second
			s := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
			defer s.Close()
			old, cur := tc.limit(3, time.Second).Named("quota"), tc.limit(3, time.Hour).Named("quota")
			first := apply(t, s, old, 2)
			apply(t, s, old, 1)
			clock.Advance(2500 * time.Millisecond)
			if tc.meet != nil {
				tc.meet(t, s, old, cur, first)
			}
			if st := apply(t, s, cur, 1); !st.Allowed || st.Remaining != 2 {
				t.Errorf("3 of 3/s spent 2.5 s ago, under 3/hour: allowed=%v remaining=%d, want 2 left", st.Allowed, st.Remaining)
			}
		})
	}
}
