package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// Goroutines spend calls of two or three keys each, over overlapping sets
// of keys in several shards, some with a sliding log beside (decided under
// the shards' mutexes), while a flood of new keys evicts others, moves
// entries and grows arrays. A call spends every key's limit or none: at
// the end each key has counted exactly what the admitted calls naming it
// spent, and never more than its quota.
func TestCallsOverOverlappingKeysAreAllOrNothing(t *testing.T) {
	const (
		keys      = 8
		quota     = 300
		deciders  = 4
		attempts  = 2000
		floodEach = 200
	)
	store, _, clock := newStore(t, memory.WithShards(4), memory.WithMaxKeys(256), memory.WithSweepInterval(0))
	hot := sluice.FixedWindow(quota, 24*time.Hour).Named("hot")
	gate := sluice.SlidingLog(1_000_000, 24*time.Hour).Named("gate")
	flood := sluice.FixedWindow(1000, time.Second).Named("flood")
	ctx := context.Background()

	var (
		mu       sync.Mutex
		counted  [keys]int64
		wg       sync.WaitGroup
		stopped  atomic.Bool
		rounds   atomic.Int64
		admitted atomic.Int64
	)
	for g := range deciders {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; i < attempts || rounds.Load() < 10; i++ {
				n := 2 + r.IntN(2)
				picked := r.Perm(keys)[:n]
				checks := make([]sluice.Check, 0, n+1)
				for _, k := range picked {
					checks = append(checks, sluice.Check{Key: fmt.Sprintf("k%d", k), Limit: hot, Cost: 1 + int64(r.IntN(2))})
				}
				if r.IntN(4) == 0 {
					checks = append(checks, sluice.Check{Key: "gate", Limit: gate, Cost: 1})
				}
				out := make([]sluice.Status, len(checks))
				if err := store.Apply(ctx, checks, out); err != nil {
					t.Error(err)
					return
				}
				allowed := true
				for i := range out {
					allowed = allowed && out[i].Allowed
				}
				if !allowed {
					continue
				}
				admitted.Add(1)
				mu.Lock()
				for j, k := range picked {
					counted[k] += checks[j].Cost
				}
				mu.Unlock()
			}
		})
	}
	var churn sync.WaitGroup
	churn.Go(func() {
		checks := []sluice.Check{{Limit: flood, Cost: 1}}
		out := make([]sluice.Status, 1)
		for round := 0; !stopped.Load(); round++ {
			for i := range floodEach {
				checks[0].Key = fmt.Sprintf("flood-%d-%d", round, i)
				if err := store.Apply(ctx, checks, out); err != nil {
					t.Error(err)
					return
				}
			}
			clock.Advance(time.Second)
			if round%2 == 0 {
				store.Sweep()
			}
			rounds.Add(1)
		}
	})
	wg.Wait()
	stopped.Store(true)
	churn.Wait()

	peek := []sluice.Check{{Limit: hot}}
	out := make([]sluice.Status, 1)
	for k := range keys {
		peek[0].Key = fmt.Sprintf("k%d", k)
		if err := store.Apply(ctx, peek, out); err != nil {
			t.Fatal(err)
		}
		if used := quota - out[0].Remaining; used != counted[k] {
			t.Errorf("%s: counts %d, admitted calls spent %d", peek[0].Key, used, counted[k])
		}
		if counted[k] > quota {
			t.Errorf("%s: admitted calls spent %d, quota %d", peek[0].Key, counted[k], quota)
		}
	}
	if admitted.Load() == 0 {
		t.Error("nothing admitted")
	}
}
