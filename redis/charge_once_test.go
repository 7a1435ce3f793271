package redis

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A charge sent again under an id Redis has taken takes nothing, under
// every algorithm; one under a new id takes its units; an empty id takes
// them whatever was taken before. Redis keeps the id for the limit's
// charge horizon and a minute.
func TestChargeOnceTakesEachIDOnce(t *testing.T) {
	srv := redistest.Standalone(t)
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
	s := New(srv.Client(t), WithTimeout(testTimeout), WithTimeForTesting(clock.Now))
	ctx := context.Background()
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(10, time.Minute), sluice.SlidingLog(10, time.Minute), sluice.SlidingCounter(10, time.Minute),
		sluice.TokenBucket(10, time.Hour), sluice.LeakyBucket(10, time.Hour), sluice.GCRA(10, time.Hour),
	} {
		t.Run(l.Algorithm().String(), func(t *testing.T) {
			key := "once-" + l.Algorithm().String()
			steps := []struct {
				id        string
				cost, out int64
			}{
				{"a", 3, 3},
				{"a", 3, -1}, // the retry of a charge whose reply was lost
				{"a", 5, -1}, // whatever its cost
				{"b", 2, 2},
				{"", 1, 1},
				{"", 1, 1},
			}
			for i, st := range steps {
				taken := make([]int64, 1)
				if err := s.charge(ctx, []sluice.Check{{Key: key, Limit: l, Cost: st.cost}}, []string{st.id}, taken); err != nil {
					t.Fatal(err)
				}
				if taken[0] != st.out {
					t.Errorf("step %d, id %q cost %d: taken %d, want %d", i, st.id, st.cost, taken[0], st.out)
				}
			}
			out := make([]sluice.Status, 1)
			if err := s.Apply(ctx, []sluice.Check{{Key: key, Limit: l}}, out); err != nil || out[0].Remaining != 3 {
				t.Errorf("after charges of 3, 2, 1 and 1: %+v, %v; want 3 left", out[0], err)
			}
			life := failover.ChargeHorizon(l) + time.Minute
			ms, err := srv.Do("PTTL", chargeIDKey(Key(key, l.ID()), "a"))
			if n, ok := ms.(int64); err != nil || !ok || time.Duration(n)*time.Millisecond > life || time.Duration(n)*time.Millisecond < life-time.Minute {
				t.Errorf("the id's key lives %v ms (%v), want about %v", ms, err, life)
			}
		})
	}
}

// On a Cluster each charge's id key is in its state's slot: charges of
// keys all over the slots are taken, and taken once, those of the empty
// subject and of subjects with braces (see Key) included.
func TestChargeOnceOnACluster(t *testing.T) {
	s := New(redistest.Cluster(t).Client(t), WithTimeout(testTimeout))
	ctx := context.Background()
	l := sluice.FixedWindow(10, time.Hour)
	var checks []sluice.Check
	var ids []string
	for i := range 20 {
		checks = append(checks, sluice.Check{Key: fmt.Sprintf("subject-%d", i), Limit: l, Cost: 4})
		ids = append(ids, fmt.Sprintf("id-%d", i))
	}
	for i, key := range []string{"", "}lead", "a}b{c"} {
		checks = append(checks, sluice.Check{Key: key, Limit: l, Cost: 4})
		ids = append(ids, fmt.Sprintf("id-odd-%d", i))
	}
	for range 2 {
		if err := s.ChargeOnce(ctx, checks, ids); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]sluice.Status, len(checks))
	for i := range checks {
		checks[i].Cost = 0
	}
	if err := s.Apply(ctx, checks, out); err != nil {
		t.Fatal(err)
	}
	for i, st := range out {
		if st.Remaining != 6 {
			t.Errorf("%q: %d left after one charge of 4 sent twice, want 6", checks[i].Key, st.Remaining)
		}
	}
}

// ids not one per check are the caller's error, and charge nothing.
func TestChargeOnceWantsAnIDPerCheck(t *testing.T) {
	srv := redistest.Standalone(t)
	s := New(srv.Client(t), WithTimeout(testTimeout))
	check := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 4}}
	if err := s.ChargeOnce(context.Background(), check, nil); !errors.Is(err, sluice.ErrInvalidCheck) {
		t.Errorf("ChargeOnce without ids = %v, want an error wrapping ErrInvalidCheck", err)
	}
	if n, err := srv.Do("DBSIZE"); err != nil || n != int64(0) {
		t.Errorf("Redis holds %v keys (%v), want none", n, err)
	}
}
