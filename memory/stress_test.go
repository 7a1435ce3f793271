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

// Goroutines spend and refund a fixed window of 100 on a few keys of one
// small shard, deciding without its mutex, while a flood of new keys
// evicts others (moving entries back), grows and shrinks the array, and
// the sweep forgets the flood as it expires. No decision or refund may be
// lost or doubled: at the end each key has counted exactly what was
// admitted less what was refunded, never more than 100, and a key whose
// goroutines kept trying past its quota admitted exactly 100 net.
func TestFixedWindowStaysExactThroughEvictionsSweepsAndRefunds(t *testing.T) {
	const (
		hotKeys   = 4
		quota     = 100
		deciders  = 6
		attempts  = 3000
		floodEach = 100
		minRounds = 40 // deciders keep deciding until the flood has done this many
	)
	store, _, clock := newStore(t, memory.WithShards(1), memory.WithMaxKeys(32), memory.WithSweepInterval(0))
	// A day's window: the clock's steps below stay inside it.
	hot := sluice.FixedWindow(quota, 24*time.Hour).Named("hot")
	// The flood uses a thousandth of its quota, so the store evicts it
	// before any hot key (less used), and it expires a second after it came.
	flood := sluice.FixedWindow(1000, time.Second).Named("flood")
	ctx := context.Background()

	var (
		admitted, refunded [hotKeys]atomic.Int64
		wg                 sync.WaitGroup
		stopped            atomic.Bool
		rounds             atomic.Int64
	)
	for g := range deciders {
		wg.Go(func() {
			checks := []sluice.Check{{Limit: hot, Cost: 1}}
			out := make([]sluice.Status, 1)
			charged := make([]int64, 1)
			for i := 0; i < attempts || rounds.Load() < minRounds; i++ {
				k := (i + g) % hotKeys
				checks[0].Key = fmt.Sprintf("hot-%d", k)
				if err := store.Apply(ctx, checks, out); err != nil {
					t.Error(err)
					return
				}
				if !out[0].Allowed {
					continue
				}
				admitted[k].Add(1)
				// Keys 0 and 1 give back every other admission: their
				// counts go up and down while the flood runs.
				if k < 2 && i%2 == 0 {
					charged[0] = out[0].Charged
					if err := store.Refund(ctx, checks, charged); err != nil {
						t.Error(err)
						return
					}
					refunded[k].Add(1)
				}
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
			store.Sweep()
			rounds.Add(1)
		}
	})
	wg.Wait()
	stopped.Store(true)
	churn.Wait()

	peek := []sluice.Check{{Limit: hot}}
	out := make([]sluice.Status, 1)
	for k := range hotKeys {
		peek[0].Key = fmt.Sprintf("hot-%d", k)
		if err := store.Apply(ctx, peek, out); err != nil {
			t.Fatal(err)
		}
		net := admitted[k].Load() - refunded[k].Load()
		if used := quota - out[0].Remaining; used != net {
			t.Errorf("%s: counts %d, want %d (%d admitted, %d refunded)", peek[0].Key, used, net, admitted[k].Load(), refunded[k].Load())
		}
		if k >= 2 && net != quota {
			t.Errorf("%s: admitted %d net, want exactly %d", peek[0].Key, net, quota)
		}
	}
	if st := store.Stats(); st.Evictions+st.Expirations == 0 {
		t.Error("nothing was evicted or swept: the test did not exercise the owner's path")
	}
}
