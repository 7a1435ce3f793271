package memory_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// Decisions on keys the store holds run without the shard's mutex, holding
// only the key's entry, while the mutex's holder inserts new keys, grows
// arrays, sweeps expired keys out (moving entries back) and decides
// multi-limit calls. Through all of that every hot key must admit exactly
// its burst, and a two-limit call must spend both limits or neither.
func TestDecisionsStayExactWhileTheArraysChange(t *testing.T) {
	const (
		hotKeys    = 16
		burst      = 500
		deciders   = 3
		attempts   = 4 * hotKeys * burst / deciders // well past every burst
		floodRound = 3000
		minRounds  = 20 // deciders keep deciding until the churn has done this many
		maxRounds  = 10_000
	)
	// Few shards, so the flood shares the hot keys' shards.
	store, lim, clock := newStore(t, memory.WithShards(4), memory.WithSweepInterval(0))
	// One unit back per 0.8 days: the clock's steps below (2 s per round,
	// at most maxRounds rounds) give nothing back.
	hot := sluice.GCRA(burst, 400*24*time.Hour).Named("hot")
	hot2 := sluice.TokenBucket(burst, 400*24*time.Hour).Named("hot2")
	// The flood's keys go into the hot keys' arrays (under the hot keys'
	// limit name and algorithm), so that its inserts grow them and its
	// expiry moves their entries; it is forgotten a second after it came.
	flood := sluice.GCRA(10, time.Second).Named("hot")
	keys := make([]string, hotKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("hot-%d", i)
	}

	var (
		single  [hotKeys]atomic.Int64 // admitted by one-check calls (hot)
		both    [hotKeys]atomic.Int64 // admitted by two-check calls (hot + hot2)
		wg      sync.WaitGroup
		stopped atomic.Bool
		rounds  atomic.Int64
	)
	ctx := context.Background()
	for g := range deciders {
		wg.Go(func() {
			var d sluice.Decision
			checks := []sluice.Check{{Limit: hot, Cost: 1}}
			for i := 0; i < attempts || rounds.Load() < minRounds; i++ {
				k := (i*7 + g) % hotKeys
				checks[0].Key = keys[k]
				if err := lim.Allow(ctx, checks, &d); err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					single[k].Add(1)
				}
			}
		})
	}
	wg.Go(func() { // two-limit calls: all or nothing
		var d sluice.Decision
		checks := []sluice.Check{{Limit: hot, Cost: 1}, {Limit: hot2, Cost: 1}}
		for i := 0; i < attempts || rounds.Load() < minRounds; i++ {
			k := i % hotKeys
			checks[0].Key, checks[1].Key = keys[k], keys[k]
			if err := lim.Allow(ctx, checks, &d); err != nil {
				t.Error(err)
				return
			}
			if d.Allowed {
				both[k].Add(1)
			}
		}
	})
	var churn sync.WaitGroup
	churn.Go(func() { // new keys grow the arrays; the clock and the sweep drop them
		var d sluice.Decision
		checks := []sluice.Check{{Limit: flood, Cost: 1}}
		for round := 0; !stopped.Load() && round < maxRounds; round++ {
			for i := range floodRound {
				checks[0].Key = fmt.Sprintf("flood-%d-%d", round, i)
				if err := lim.Allow(ctx, checks, &d); err != nil {
					t.Error(err)
					return
				}
			}
			clock.Advance(2 * time.Second)
			store.Sweep()
			rounds.Add(1)
		}
	})
	wg.Wait()
	stopped.Store(true)
	churn.Wait()

	peek := []sluice.Check{{Limit: hot}, {Limit: hot2}}
	var d sluice.Decision
	for k, key := range keys {
		got := single[k].Load() + both[k].Load()
		if got != burst {
			t.Errorf("%s: admitted %d (%d alone, %d with hot2), want exactly %d", key, got, single[k].Load(), both[k].Load(), burst)
		}
		peek[0].Key, peek[1].Key = key, key
		if err := lim.Allow(ctx, peek, &d); err != nil {
			t.Fatal(err)
		}
		if r := d.Statuses[0].Remaining; r != 0 {
			t.Errorf("%s: hot has %d left, want 0", key, r)
		}
		if r, want := d.Statuses[1].Remaining, burst-both[k].Load(); r != want {
			t.Errorf("%s: hot2 has %d left, want %d (spent only with hot)", key, r, want)
		}
	}
}

// With a key bound far below the flood, new keys evict old ones while
// decisions run without the mutex: nothing deadlocks, the bound holds and
// the store still decides.
func TestDecisionsRunWhileKeysAreEvicted(t *testing.T) {
	const maxKeys = 256
	store, lim, clock := newStore(t, memory.WithShards(2), memory.WithMaxKeys(maxKeys), memory.WithSweepInterval(0))
	l := sluice.GCRA(1000, time.Second)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			var d sluice.Decision
			checks := []sluice.Check{{Limit: l, Cost: 1}, {Limit: l.Named("second"), Cost: 1}}
			for i := range 20_000 {
				// Mostly keys held (decided holding their entry), some new
				// (inserted under the mutex, evicting).
				k := i % 300
				if i%5 == 0 {
					k = 1000 + g*100_000 + i
				}
				checks[0].Key, checks[1].Key = fmt.Sprint(k), fmt.Sprint(k)
				n := 1 + i%2
				if err := lim.Allow(ctx, checks[:n], &d); err != nil {
					t.Error(err)
					return
				}
				if i%1000 == 0 {
					clock.Advance(10 * time.Millisecond)
					store.Sweep()
				}
			}
		})
	}
	wg.Wait()
	st := store.Stats()
	if st.Keys > maxKeys {
		t.Errorf("holds %d keys, bound %d", st.Keys, maxKeys)
	}
	if st.Evictions == 0 {
		t.Error("no evictions: the test did not fill the store")
	}
}
