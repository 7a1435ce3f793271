package redis_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/redis"
)

// A Reset of a leasable limit first appends its announcement to
// sluice:resets (XADD, PEXPIRE): when the connection it needs is being
// made by a hasty call that gives up on it, the announcement, never sent,
// is sent again as a script is (doMulti), rather than failing the Reset
// as an error of the store with its own time (2 s) far from spent.
func TestAResetWaitingForAConnectionAHastyCallMakesIsSentAgain(t *testing.T) {
	addr := farRedis(t)
	lim := sluice.FixedWindow(1_000_000, time.Hour) // leasable: its Reset is announced
	var mu sync.Mutex
	var resets, failed int
	var first error
	for round := range 12 {
		s, err := redis.Dial(redis.Options{Addrs: []string{addr}, Timeout: 2 * time.Second}, redis.WithBatching(0))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		hastyCalls(&wg, 12, func(i int) time.Duration { return time.Duration(100+150*i) * time.Microsecond }, func(ctx context.Context, i int) {
			s.Apply(ctx, []sluice.Check{{Key: "hasty-" + strconv.Itoa(round) + "-" + strconv.Itoa(i), Limit: lim, Cost: 1}}, make([]sluice.Status, 1))
		})
		for i := range 6 {
			wg.Go(func() {
				_, err := s.Reset(context.Background(), "subject-"+strconv.Itoa(round)+"-"+strconv.Itoa(i), []sluice.Limit{lim})
				mu.Lock()
				resets++
				if err != nil {
					failed++
					if first == nil {
						first = err
					}
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		s.Close()
	}
	if failed > 0 {
		t.Errorf("%d of %d Resets without a deadline of their own failed (first: %v) although Redis answered every "+
			"HELLO within their Timeout: a hasty call's give-up on the connection failed their announcement", failed, resets, first)
	}
}
