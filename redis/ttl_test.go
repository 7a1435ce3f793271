package redis_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// After a mixed workload — every algorithm, batches within and across
// slots, refusals, peeks, shadows, queues — every key the store wrote
// carries a TTL: none can outlive its state.
func TestEveryKeyCarriesATTL(t *testing.T) {
	t.Parallel()
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Standalone(t)
		client := srv.Client(t)
		mixedWorkload(t, client)
		keys, err := srv.Keys("*")
		if err != nil {
			t.Fatal(err)
		}
		checkTTLs(t, client, keys)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.Cluster(t)
		client := c.Client(t)
		mixedWorkload(t, client)
		keys, err := c.Keys("*")
		if err != nil {
			t.Fatal(err)
		}
		checkTTLs(t, client, keys)
	})
}

func mixedWorkload(t *testing.T, client rueidis.Client) {
	limits := []sluice.Limit{
		sluice.FixedWindow(5, time.Minute).Named("fw"),
		sluice.SlidingLog(5, time.Minute).Named("log"),
		sluice.SlidingCounter(5, time.Minute).Named("counter"),
		sluice.TokenBucket(5, time.Minute).Named("tb"),
		sluice.LeakyBucket(5, time.Minute).WithMaxWait(10 * time.Second).Named("queue"),
		sluice.GCRA(5, time.Minute).WithBurst(3).Named("gcra"),
		sluice.PerSecond(1000).Named("fast"), // keys that expire within the test
	}
	subjects := []string{"alice", "bob", "carol", "dave", "global"}
	var wg sync.WaitGroup
	for g := range 8 {
		store := redis.New(client, redis.WithTimeout(testTimeout))
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 3))
			for range 150 {
				var checks []sluice.Check
				used := map[string]bool{}
				for range 1 + r.IntN(4) {
					l, s := limits[r.IntN(len(limits))], subjects[r.IntN(len(subjects))]
					if used[s+l.Name()] {
						continue
					}
					used[s+l.Name()] = true
					checks = append(checks, sluice.Check{Key: s, Limit: l.WithShadow(r.IntN(5) == 0), Cost: r.Int64N(4)})
				}
				out := make([]sluice.Status, len(checks))
				if err := store.Apply(context.Background(), checks, out); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func checkTTLs(t *testing.T, client rueidis.Client, keys []string) {
	t.Helper()
	if len(keys) < 10 {
		t.Fatalf("only %d keys after the workload: %v", len(keys), keys)
	}
	for _, k := range keys {
		ms, err := client.Do(context.Background(), client.B().Pttl().Key(k).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		// -1 is a key without a TTL. (-2: it expired between SCAN and PTTL;
		// 0: it expires within the millisecond.)
		if ms == -1 {
			t.Errorf("key %s has PTTL %d", k, ms)
		}
	}
	t.Logf("%d keys, all with a TTL", len(keys))
}
