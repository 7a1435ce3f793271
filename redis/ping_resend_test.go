package redis_test

import (
	"context"
	"crypto/tls"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/redis"
)

// Guarded.Ping "waits as long as ctx allows" and backs /readyz (2 s). When
// the connection it needs is being made by another call with a short
// deadline (a decision under Envoy's 20 ms, the watch's 100 ms, a probe
// with a short timeout), rueidis hands that call's giving up to the Ping,
// which is sent again as the store's calls are: a readiness probe with
// seconds to spare does not report a Redis that is up as not reachable.
func TestAPingWithTimeIsNotFailedByAnotherCallGivingUp(t *testing.T) {
	o, proxy := slowTLS(t, 10*time.Millisecond, tls.VersionTLS12, tls.VersionTLS12)
	o.Timeout = time.Second
	g, err := redis.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	waitFor(t, func() bool { return g.Ping(context.Background()) == nil })

	for round := 0; round < 6; round++ {
		proxy.ResetAll() // every connection lost: the next calls make new ones
		time.Sleep(10 * time.Millisecond)
		var wg sync.WaitGroup
		for range 4 { // impatient callers: they start the dials and give up
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
				defer cancel()
				g.Ping(ctx)
			})
		}
		time.Sleep(time.Millisecond)
		errs := make(chan error, 4)
		for range 4 { // patient callers, as /readyz's probe
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				start := time.Now()
				if err := g.Ping(ctx); err != nil {
					t.Logf("after %v", time.Since(start).Round(time.Millisecond))
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			t.Fatalf("round %d: a Ping with 3 s failed on a Redis that is up: %v", round, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
