package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// docs/decisions.md ("A limit's state is keyed by its ID"): a reload keeps
// what clients spent once a call has met the state, and a state no call
// meets between the reload and its old expiry is forgotten then. Redis
// forgets it at the key's TTL; the memory store reads a state past its
// expiry as a fresh one, whenever its sweep runs. So a client that spent 3
// of 3/s, met by no call until well past that second, under the same ID
// now 3/hour, is admitted by both stores with 2 left: the stores decide
// alike, and the memory store's decision does not depend on its
// background sweep (here the default, once a minute of real time).
func TestAStatePastItsExpiryIsForgottenByBothStores(t *testing.T) {
	ctx := context.Background()
	client := redistest.Standalone(t).Client(t)
	mem := memory.New()
	t.Cleanup(func() { mem.Close() })
	stores := map[string]sluice.Store{"memory": mem, "redis": redis.New(client, redis.WithTimeout(testTimeout))}
	algs := map[string]func(int64, time.Duration) sluice.Limit{
		"fixed-window": sluice.FixedWindow, // inline in its key's entry
		"sliding-log":  sluice.SlidingLog,  // beside the entry
	}
	// Just after a whole second: the charges fall in one 1 s window, whose
	// end is the states' expiry on both stores.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	began := time.Now()
	key := fmt.Sprintf("expired-%d", began.UnixNano())
	apply := func(store sluice.Store, l sluice.Limit, cost int64) sluice.Status {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := store.Apply(ctx, []sluice.Check{{Key: key, Limit: l, Cost: cost}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	for name, store := range stores {
		for alg, mk := range algs {
			if st := apply(store, mk(3, time.Second).WithID(alg), 3); !st.Allowed {
				t.Fatalf("%s, %s: spending the old limit: %+v", name, alg, st)
			}
		}
	}
	if time.Since(began) > 500*time.Millisecond {
		t.Skip("too slow to keep the charges in one second's window")
	}
	// Past the old window's end, and its whole second (the memory store
	// keeps an expiry in whole seconds, rounded up).
	time.Sleep(time.Until(began.Truncate(time.Second).Add(2500 * time.Millisecond)))
	if began.Truncate(time.Hour) != time.Now().Truncate(time.Hour) {
		t.Skip("an hour's boundary passed: the hourly window starts afresh anyway")
	}
	for alg, mk := range algs {
		cur := mk(3, time.Hour).WithID(alg) // the reload: the same ID, an hour's window
		m, r := apply(mem, cur, 1), apply(stores["redis"], cur, 1)
		if !r.Allowed || r.Remaining != 2 {
			t.Fatalf("%s: Redis did not forget the state at its TTL: %+v", alg, r)
		}
		if m.Allowed != r.Allowed || m.Remaining != r.Remaining {
			t.Errorf("%s, 3 of 3/s spent, met 1.5 s after its expiry under 3/hour: memory allowed=%v remaining=%d, Redis allowed=%v remaining=%d",
				alg, m.Allowed, m.Remaining, r.Allowed, r.Remaining)
		}
	}
}
