package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// perMinuteSets returns n limits of one ID and algorithm that differ in
// quantity, as the "per-minute" limits of n plans, or of n keys with a
// quota of their own, are.
func perMinuteSets(n int) []sluice.Limit {
	ls := make([]sluice.Limit, n)
	for i := range ls {
		ls[i] = sluice.TokenBucket(int64(2+i), time.Minute).Named("per-minute")
	}
	return ls
}

// A new key costs the same under any of 40 parameter sets of one limit ID
// as under one: the store recognizes a set it has met without copying
// those it knows. So it does under 600, more than the store keeps: a set
// it has no room for is not noted again on every call, whatever its
// window.
func TestNewKeyAllocationsDoNotGrowWithParameterSets(t *testing.T) {
	keys := make([]string, 4000)
	for i := range keys {
		keys[i] = fmt.Sprint("key-", i)
	}
	perNewKey := func(sets []sluice.Limit) float64 {
		// A full store: its arrays grow no more, and each new key
		// evicts one.
		store, _, _ := newStore(t, memory.WithMaxKeys(256), memory.WithSweepInterval(0))
		ctx := context.Background()
		out := make([]sluice.Status, 1)
		checks := make([]sluice.Check, 1)
		n := 0
		next := func() {
			checks[0] = sluice.Check{Key: keys[n%len(keys)], Limit: sets[n%len(sets)], Cost: 1}
			n++
			if err := store.Apply(ctx, checks, out); err != nil {
				t.Fatal(err)
			}
		}
		for range 1000 {
			next()
		}
		return testing.AllocsPerRun(1000, next)
	}
	// Fixed windows of 1 to 7 minutes: the sets beyond those kept are
	// noted by window, and past the windows noted by quantity alone.
	windowSets := func(n int) []sluice.Limit {
		ls := make([]sluice.Limit, n)
		for i := range ls {
			ls[i] = sluice.FixedWindow(int64(2+i), time.Duration(1+i%7)*time.Minute).Named("per-minute")
		}
		return ls
	}
	for _, sets := range []func(n int) []sluice.Limit{perMinuteSets, windowSets} {
		one := perNewKey(sets(1))
		for _, n := range []int{40, 600} {
			if many := perNewKey(sets(n)); many > one {
				t.Errorf("allocations per decision on a new key: %.1f under one parameter set, %.1f under %d of one limit ID (%v)",
					one, many, n, sets(n)[n-1])
			}
		}
	}
}

// A full store whose states were written under the first 8 of many
// parameter sets of one limit ID evicts one that admits for a newcomer: it
// ranks each state by the set that wrote it, however many sets came after
// it, and beyond the sets it keeps it forgets none it kept. (The sets are
// daily quotas of keys in as many time zones: where a day ends differs by
// set.)
func TestFullStoreRanksStatesOfEarlyParameterSets(t *testing.T) {
	for _, n := range []int{24, 600} {
		store, lim, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(8), memory.WithSweepInterval(0))
		ctx := context.Background()
		sets := make([]sluice.Limit, n)
		for i := range sets {
			sets[i] = sluice.Calendar(1000, sluice.Day).WithOffset(time.Duration(i) * time.Minute).Named("per-day")
		}
		for i := range 8 { // each spends 1 of its 1000: all admit more
			if d, _ := allow(lim, ctx, sluice.Check{Key: fmt.Sprint("k", i), Limit: sets[i], Cost: 1}); !d.Allowed {
				t.Fatalf("k%d refused", i)
			}
		}
		for i := 8; i < len(sets); i++ { // peeks of new keys: the store meets the other sets
			allow(lim, ctx, sluice.Check{Key: fmt.Sprint("peek", i), Limit: sets[i], Cost: 0})
		}
		if d, _ := allow(lim, ctx, sluice.Check{Key: "newcomer", Limit: sets[n-1], Cost: 1}); !d.Allowed {
			t.Errorf("%d sets: a newcomer at a full store of states that admit is refused: %+v (stats %+v)", n, d.Statuses[0], store.Stats())
		}
	}
}
