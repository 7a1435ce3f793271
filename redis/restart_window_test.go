package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A Redis that comes back without its data within the window of a limit
// has forgotten what it counted in it: the fleet admits, in that window,
// at most the limit more than its promise — what the lost state counted
// — and not more (package documentation, Failover). What the fallback
// admitted during the outage is charged to the new state as after any
// outage.
func TestARestartWithoutDataInTheWindowAdmitsAtMostWhatWasCountedAgain(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	open := func() *redis.Guarded {
		g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Timeout: testTimeout,
			Instances: 2, OnStoreError: failover.Local}, redis.WithBatching(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	a, b := open(), open()
	const quota = 100
	c := sluice.Check{Key: "restart-window", Limit: sluice.FixedWindow(quota, 400*24*time.Hour), Cost: 1}

	before := 0
	for range 30 {
		before += spendN(t, a, c, 1) + spendN(t, b, c, 1)
	}
	counted := quota - peek(t, srv, c)
	srv.Kill()
	outage := spendN(t, a, c, quota) + spendN(t, b, c, quota)
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for _, g := range []*redis.Guarded{a, b} {
		for g.Losses().EmptyRestarts == 0 || g.Ping(context.Background()) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("the restart not seen within 10 s: %+v", g.Losses())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	after := 0
	// Past the breakers' period and the return period that follows it.
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		after += spendN(t, a, c, 2) + spendN(t, b, c, 2)
	}
	total := before + outage + after
	t.Logf("admitted %d in the window: %d before the kill (Redis counted %d), %d by the fallback during the outage, %d after the restart; Redis holds %d of %d now",
		total, before, counted, outage, after, quota-peek(t, srv, c), quota)
	if int64(total) > quota+counted {
		t.Errorf("admitted %d in the window of a limit of %d, more than the limit and the %d units the lost state counted", total, quota, counted)
	}
}
