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

// A flood of new keys of one to seven limits each (inline states, a
// sliding counter's two slots, sliding logs and leases beside the array,
// and keys with more states than an entry has slots) runs against a small
// bound while other goroutines decide for keys the store holds without a
// mutex, reset keys, sweep, and read Stats. Stats.Keys never passes the
// bound, and it is the number of states the store holds: at the end,
// resetting every key under every limit forgets exactly that many, and
// leaves none.
func TestBoundAndCountHoldUnderConcurrentFloodResetAndSweep(t *testing.T) {
	const maxKeys = 64
	store, _, clock := newStore(t, memory.WithShards(2), memory.WithMaxKeys(maxKeys), memory.WithSweepInterval(0))
	limits := []sluice.Limit{
		sluice.FixedWindow(1000, time.Second).Named("fw"),
		sluice.SlidingCounter(1000, time.Second).Named("sc"),
		sluice.GCRA(1000, time.Second).Named("gcra"),
		sluice.SlidingLog(sluice.MaxQuantity, time.Second).Named("log"),
		sluice.Concurrency(1000, time.Second).Named("conc"),
		sluice.TokenBucket(1000, time.Second).Named("tb"),
		sluice.SlidingCounter(1000, time.Minute).Named("sc2"),
	}
	ctx := context.Background()
	var (
		wg      sync.WaitGroup
		stopped atomic.Bool
		keysMu  sync.Mutex
		seen    = map[string]bool{}
	)
	note := func(k string) {
		keysMu.Lock()
		seen[k] = true
		keysMu.Unlock()
	}
	call := func(key string, n, cost int) {
		checks := make([]sluice.Check, n)
		for j := range checks {
			checks[j] = sluice.Check{Key: key, Limit: limits[j], Cost: int64(cost)}
		}
		if err := store.Apply(ctx, checks, make([]sluice.Status, n)); err != nil {
			t.Error(err)
		}
	}
	hot := []string{"hot-0", "hot-1", "hot-2", "hot-3"}
	for _, k := range hot {
		note(k)
	}
	for g := range 2 { // deciders on held keys: the lock-free path
		wg.Go(func() {
			for i := 0; !stopped.Load(); i++ {
				call(hot[(i+g)%len(hot)], 1+i%3, 1)
			}
		})
	}
	wg.Go(func() { // resets of hot keys and of the flood
		for i := 0; !stopped.Load(); i++ {
			store.Reset(hot[i%len(hot)], limits[:1+i%len(limits)])
			store.Reset(fmt.Sprint("flood-", i%500), limits)
		}
	})
	wg.Go(func() { // readers of the bound
		for !stopped.Load() {
			if st := store.Stats(); st.Keys > maxKeys {
				t.Errorf("Stats.Keys %d above the bound %d", st.Keys, maxKeys)
				return
			}
		}
	})
	for i := range 6000 { // the flood, with the clock and the sweep
		k := fmt.Sprint("flood-", i%500)
		note(k)
		call(k, 1+i%len(limits), 1+i%5)
		if i%1000 == 999 {
			clock.Advance(300 * time.Millisecond)
			store.Sweep()
		}
	}
	stopped.Store(true)
	wg.Wait()

	held := store.Stats().Keys
	if held > maxKeys {
		t.Errorf("Stats.Keys %d above the bound %d", held, maxKeys)
	}
	forgot := 0
	for k := range seen {
		forgot += store.Reset(k, limits)
	}
	if forgot != held {
		t.Errorf("resetting every key forgot %d states; Stats.Keys said %d", forgot, held)
	}
	if st := store.Stats(); st.Keys != 0 {
		t.Errorf("after resetting every key: Stats.Keys %d, want 0", st.Keys)
	}
	if n := store.Sweep(); n != 0 {
		t.Errorf("a sweep after every key was reset forgot %d states", n)
	}
}
