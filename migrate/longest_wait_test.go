package migrate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A queue of quantity per window with longestWait's max_wait holds, of a
// burst arriving at one instant, one request at once and burst more, as
// nginx's limit_req burst=n (no nodelay) does, at rates whose slot is no
// whole number of microseconds too.
func TestLongestWaitHoldsWhatNginxHolds(t *testing.T) {
	for _, tc := range []struct {
		quantity int64
		window   time.Duration
		burst    int64
	}{
		{3, time.Second, 5}, {7, time.Minute, 4}, {1000, time.Second, 20}, {3, time.Minute, 2}, {30, time.Minute, 10},
	} {
		t.Run(fmt.Sprintf("%d per %s burst %d", tc.quantity, tc.window, tc.burst), func(t *testing.T) {
			// A clock that stands still: the burst arrives at one instant
			// however slowly the loop runs.
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			s := memory.New(memory.WithSweepInterval(0), memory.WithClock(func() time.Time { return at }))
			defer s.Close()
			lim := sluice.NewLimiter(s)
			l := sluice.LeakyBucket(tc.quantity, tc.window).WithBurst(1).WithMaxWait(longestWait(tc.burst, tc.window, tc.quantity))
			if err := l.Err(); err != nil {
				t.Fatal(err)
			}
			admitted := int64(0)
			var d sluice.Decision
			for range tc.burst + 3 {
				if err := lim.Allow(context.Background(), []sluice.Check{{Key: "k", Limit: l, Cost: 1}}, &d); err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					admitted++
				}
			}
			if admitted != tc.burst+1 {
				t.Errorf("admitted %d of a burst of %d at once, want %d (one now, burst=%d held)", admitted, tc.burst+3, tc.burst+1, tc.burst)
			}
		})
	}
}
