package memory_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// admitsOne reports whether st admits a check of cost 1 of l at now.
func admitsOne(l sluice.Limit, st sluice.State, now int64) bool {
	st.Log = slices.Clip(st.Log)
	_, s := storetest.Decided(l.Decide(st, now, 1))
	return s.Allowed
}

// unevictable reports whether a full store keeps st of l rather than
// evict it at now: st refuses a check of cost 1, or holds a lease that has
// not expired (evicting the book would let its key hold more than Quantity
// leases at once).
func unevictable(l sluice.Limit, st sluice.State, now int64) bool {
	if !admitsOne(l, st, now) {
		return true
	}
	if l.Algorithm() != sluice.AlgorithmConcurrency {
		return false
	}
	st.Log = slices.Clip(st.Log)
	_, s := storetest.Decided(l.Decide(st, now, 0))
	return s.ResetAfter > 0
}

// TestPropertyEvictionNeverFreesARefusingState states the eviction rule
// against a model: an unbounded store (sluice.DecideBatch over a map of
// states) that forgets a state only where the bounded store may have. The
// bounded store (2 to 10 states, one shard) may decide a call otherwise
// than the model only as if it had evicted some of the call's states that
// admitted a check of cost 1 at the time of the previous call (an eviction
// happens at some earlier call, when the state admitted one by the rule,
// and a state left alone admits more as time passes, never less). Or it
// may refuse a call for want of room: then at least as many states as the
// store holds, less those of the call's keys, refuse a check of cost 1
// under a limit of their name or are lease books holding a lease that has
// not expired, counted in units of the bound (a sliding
// log's and a lease book's count two). Limits of one name and algorithm with
// different parameters share their states, as the plans of a policy and
// its degradation levels do.
func TestPropertyEvictionNeverFreesARefusingState(t *testing.T) {
	variants := [][]sluice.Limit{
		{sluice.GCRA(5, time.Second), sluice.GCRA(3, 2*time.Second).WithBurst(2)},
		{sluice.FixedWindow(3, time.Second), sluice.FixedWindow(5, 2*time.Second)},
		{sluice.SlidingLog(3, time.Second), sluice.SlidingLog(2, 3*time.Second)},
		{sluice.SlidingCounter(4, time.Second), sluice.SlidingCounter(2, 500*time.Millisecond)},
		{sluice.TokenBucket(3, 500*time.Millisecond), sluice.TokenBucket(6, 3*time.Second)},
		{sluice.LeakyBucket(4, time.Second), sluice.LeakyBucket(2, time.Second).WithMaxWait(time.Second)},
		{sluice.Concurrency(2, time.Second), sluice.Concurrency(3, 2*time.Second)},
	}
	type pair struct {
		key   string
		limit sluice.Limit
	}
	rapid.Check(t, func(t *rapid.T) {
		maxKeys := rapid.IntRange(2, 10).Draw(t, "maxKeys")
		var pairs []pair
		for k := range 6 {
			for n, vs := range variants {
				l := vs[rapid.IntRange(0, len(vs)-1).Draw(t, "variant")].Named(fmt.Sprintf("l%d", n))
				pairs = append(pairs, pair{fmt.Sprintf("k%d", k), l})
			}
		}
		clock := newClock()
		store := memory.New(memory.WithClock(clock.Now), memory.WithMaxKeys(maxKeys), memory.WithSweepInterval(0))
		defer store.Close()
		ctx := context.Background()
		model := make([]sluice.State, len(pairs))
		kept := make([]bool, len(pairs)) // the store may hold the state
		var prev int64                   // the time of the previous call
		for step := range rapid.IntRange(1, 80).Draw(t, "steps") {
			ms := rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(0, 400), rapid.Int64Range(0, 3000)).Draw(t, "ms")
			clock.Advance(time.Duration(ms) * time.Millisecond)
			now := sluice.MicrosSinceEpoch(clock.Now())
			ids := rapid.SliceOfNDistinct(rapid.IntRange(0, len(pairs)-1), 1, 3, rapid.ID[int]).Draw(t, "pairs")
			checks := make([]sluice.Check, len(ids))
			for i, id := range ids {
				checks[i] = sluice.Check{Key: pairs[id].key, Limit: pairs[id].limit, Cost: rapid.Int64Range(0, 3).Draw(t, "cost")}
			}
			before := store.Stats().NoRoom
			got := make([]sluice.Status, len(checks))
			if err := store.Apply(ctx, checks, got); err != nil {
				t.Fatal(err)
			}
			noRoom := store.Stats().NoRoom - before

			// The call's states the store may have evicted before.
			var free []int
			for i, id := range ids {
				if step > 0 && admitsOne(pairs[id].limit, model[id], prev) {
					free = append(free, i)
				}
			}
			matched := false
			for size := 0; size <= len(free) && !matched; size++ {
				for mask := range 1 << len(free) {
					if popcount(mask) != size {
						continue
					}
					states := make([]sluice.State, len(ids))
					for i, id := range ids {
						states[i] = model[id]
						states[i].Log = slices.Clip(states[i].Log)
					}
					for b, i := range free {
						if mask>>b&1 != 0 {
							states[i] = sluice.State{}
						}
					}
					want := make([]sluice.Status, len(checks))
					if _, err := sluice.DecideBatch(checks, states, now, want); err != nil {
						t.Fatal(err)
					}
					if slices.Equal(got, want) {
						for i, id := range ids {
							model[id] = states[i]
							kept[id] = kept[id] || states[i].T != 0 || states[i].A != 0 || states[i].B != 0 || len(states[i].Log) != 0
						}
						matched = true
						break
					}
				}
			}
			if !matched {
				if noRoom == 0 {
					t.Fatalf("step %d: %v decided %+v; no state of the call that the store may have evicted explains it (evictable: %v)", step, checks, got, free)
				}
				// The store holds at least maxKeys-need+1 units (see
				// WithMaxKeys: a state each, and a log's or a lease book's
				// array of room for up to 8 entries one more: these hold
				// at most 3), and every state it may evict refuses (under a
				// limit of its name: see rankState): all but those of the
				// call's keys (under any limit), which it never evicts.
				units := func(id int) int {
					if n := id % len(variants); n == 2 || n == 6 {
						return 2
					}
					return 1
				}
				refusing, own, need := 0, 0, 0
				for _, id := range ids {
					need += units(id)
				}
				for id, st := range model {
					switch {
					case slices.ContainsFunc(checks, func(c sluice.Check) bool { return c.Key == pairs[id].key }):
						if kept[id] {
							own += units(id)
						}
					case slices.ContainsFunc(variants[id%len(variants)], func(l sluice.Limit) bool { return unevictable(l, st, now) }):
						refusing += units(id)
					}
				}
				if refusing < maxKeys-need+1-own {
					t.Fatalf("step %d: %v refused for want of room (%+v), but only %d units of states refuse (%d units, %d of the call's checks, %d of states of their keys)", step, checks, got, refusing, maxKeys, need, own)
				}
			}
			prev = now
		}
	})
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// A full store evicts the state with the least of its capacity used,
// never one that refuses; when only refusing states are left, a new key is
// refused until the first of them stops refusing. (A store of 8 states
// has one shard, whose sample of 8 sees them all.)
func TestEvictionTakesTheLeastUsed(t *testing.T) {
	store, lim, clock := newStore(t, memory.WithMaxKeys(8), memory.WithSweepInterval(0))
	ctx := context.Background()
	l := sluice.FixedWindow(10, time.Minute)
	used := []int64{4, 2, 9, 10, 6, 3, 8, 5}
	for i, u := range used {
		if d, _ := allow(lim, ctx, sluice.Check{Key: fmt.Sprint("k", i), Limit: l, Cost: u}); !d.Allowed {
			t.Fatalf("k%d refused", i)
		}
	}
	clock.Advance(time.Second)
	remaining := func(key string) int64 {
		d, _ := allow(lim, ctx, sluice.Check{Key: key, Limit: l, Cost: 0})
		return d.Statuses[0].Remaining
	}
	for _, victim := range []int{1, 5, 0, 7, 4, 6, 2} { // by use; never k3
		// A newcomer that spends its whole quota refuses from then on.
		if d, _ := allow(lim, ctx, sluice.Check{Key: fmt.Sprint("new", victim), Limit: l, Cost: 10}); !d.Allowed {
			t.Fatalf("newcomer refused while k%d could go", victim)
		}
		for i, u := range used {
			want := 10 - u
			if slices.Contains([]int{1, 5, 0, 7, 4, 6, 2}[:slices.Index([]int{1, 5, 0, 7, 4, 6, 2}, victim)+1], i) {
				want = 10
			}
			if r := remaining(fmt.Sprint("k", i)); r != want {
				t.Fatalf("after the newcomer that took k%d's place: k%d has %d left, want %d", victim, i, r, want)
			}
		}
	}
	// Only refusing states left: k3 and the seven newcomers.
	d, _ := allow(lim, ctx, sluice.Check{Key: "late", Limit: l, Cost: 1})
	if d.Allowed || d.Statuses[0].RetryAfter != 59*time.Second {
		t.Errorf("a new key at a store of refusing states: allowed=%v, retry after %v; want refused, until the window ends in 59s", d.Allowed, d.Statuses[0].RetryAfter)
	}
	if st := store.Stats(); st.NoRoom != 1 || st.Evictions != 7 || st.Keys != 8 {
		t.Errorf("stats %+v, want 7 evictions, 1 refused for want of room, 8 states", st)
	}
	clock.Advance(59 * time.Second) // every state expires: room again
	if d, _ := allow(lim, ctx, sluice.Check{Key: "late", Limit: l, Cost: 1}); !d.Allowed {
		t.Error("the new key is still refused after the window")
	}
}

// A call of several checks whose new key finds only refusing states is
// refused whole and changes nothing; its other checks report their states
// as a peek would.
func TestNoRoomRefusesTheWholeCall(t *testing.T) {
	store, lim, _ := newStore(t, memory.WithMaxKeys(8), memory.WithSweepInterval(0))
	ctx := context.Background()
	l := sluice.FixedWindow(10, time.Minute)
	for i := range 7 {
		allow(lim, ctx, sluice.Check{Key: fmt.Sprint("k", i), Limit: l, Cost: 10})
	}
	allow(lim, ctx, sluice.Check{Key: "mine", Limit: l.Named("a"), Cost: 1})
	call := []sluice.Check{{Key: "mine", Limit: l.Named("a"), Cost: 1}, {Key: "mine", Limit: l.Named("b"), Cost: 1}}
	d, err := allow(lim, ctx, call...)
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.Statuses[0].Remaining != 9 || d.Statuses[1].Allowed {
		t.Errorf("call admitted=%v, statuses %+v; want refused, a with 9 left, b refused", d.Allowed, d.Statuses)
	}
	if st := store.Stats(); st.NoRoom != 1 || st.Evictions != 0 || st.Keys != 8 {
		t.Errorf("stats %+v, want 1 refused for want of room, nothing evicted, 8 states", st)
	}
	// A shadow check is never refused: its state goes unkept.
	call[1].Limit = call[1].Limit.WithShadow(true)
	if d, _ := allow(lim, ctx, call...); !d.Allowed || d.Statuses[0].Remaining != 8 {
		t.Errorf("with b in shadow mode: admitted=%v, statuses %+v; want admitted, a with 8 left", d.Allowed, d.Statuses)
	}
}

// Evicting a state for a new key allocates nothing beyond what inserting
// one does.
func TestEvictionAllocatesNothing(t *testing.T) {
	for _, l := range []sluice.Limit{sluice.GCRA(100, time.Hour), sluice.TokenBucket(100, time.Hour),
		sluice.LeakyBucket(100, time.Hour).WithMaxWait(time.Minute), sluice.FixedWindow(100, time.Hour), sluice.SlidingCounter(100, time.Hour)} {
		store, lim, _ := newStore(t, memory.WithMaxKeys(256), memory.WithSweepInterval(0))
		ctx := context.Background()
		var d sluice.Decision
		keys := make([]string, 4096)
		for i := range keys {
			keys[i] = fmt.Sprint("key-", i)
		}
		checks := []sluice.Check{{Limit: l, Cost: 1}}
		for _, k := range keys[:256] {
			checks[0].Key = k
			lim.Allow(ctx, checks, &d)
		}
		i := 256
		if n := testing.AllocsPerRun(1000, func() {
			checks[0].Key = keys[i%len(keys)]
			i++
			lim.Allow(ctx, checks, &d)
		}); n != 0 {
			t.Errorf("%v: %v allocations per new key at a full store", l, n)
		}
		if store.Stats().Evictions == 0 {
			t.Errorf("%v: nothing evicted", l)
		}
	}
}

// An eviction drops one state, not its key's others, and counts one.
func TestEvictionDropsOneStateOfAKey(t *testing.T) {
	store, _, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(2), memory.WithSweepInterval(0))
	ctx := context.Background()
	light := sluice.FixedWindow(100, time.Hour).Named("light")
	heavy := sluice.FixedWindow(2, time.Hour).Named("heavy")
	out := make([]sluice.Status, 2)
	if err := store.Apply(ctx, []sluice.Check{{Key: "a", Limit: light, Cost: 1}, {Key: "a", Limit: heavy, Cost: 1}}, out); err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(ctx, []sluice.Check{{Key: "b", Limit: light, Cost: 1}}, out[:1]); err != nil || !out[0].Allowed {
		t.Fatalf("b: %+v, %v", out[0], err)
	}
	if st := store.Stats(); st.Keys != 2 || st.Evictions != 1 {
		t.Fatalf("%+v, want 2 states held and 1 evicted", st)
	}
	if err := store.Apply(ctx, []sluice.Check{{Key: "a", Limit: heavy}}, out[:1]); err != nil || out[0].Remaining != 1 {
		t.Errorf("a's heavy state after its light one was evicted: %+v, %v; want 1 left", out[0], err)
	}
}
