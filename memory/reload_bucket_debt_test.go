package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A bucket's debt is kept as a refill time (docs/decisions.md, docs/
// operations.md): a client that emptied a bucket owes the time its old
// rate takes to refill it, and a reload reads that time at the new rate.
// Tightening the rate and keeping the burst so gives back what the new
// rate would not have refilled in that time: a client that spent all 10
// of 10 a minute owes a minute, a sixth of a unit at 10 an hour, and has 9
// at once (token and leaky buckets as GCRA). Lowering the burst with the
// rate weighs the debt against the smaller burst: at 10 an hour of burst
// 1 the client has nothing until the minute it owes has passed, then one
// every 6 minutes; a burst at least the old one's refill time, as 10/h →
// 7/h of burst 7, finds it empty too. A fixed window, sliding log or
// sliding counter keeps its count, and the client stays refused.
func TestATightenedLimitGivesBackOnlyWhatItsStateKeepsAsTime(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, cur sluice.Limit
		// atOnce is what the client that spent the old limit's 10 is
		// admitted at once under cur; next, when not 0, is when a cur
		// that admits none at once admits one, and only one.
		atOnce int
		next   time.Duration
	}{
		{"gcra 10/1m to 10/1h, burst kept", sluice.GCRA(10, time.Minute), sluice.GCRA(10, time.Hour), 9, 0},
		{"token bucket 10/1m to 10/1h, burst kept", sluice.TokenBucket(10, time.Minute), sluice.TokenBucket(10, time.Hour), 9, 0},
		{"leaky bucket 10/1m to 10/1h, burst kept", sluice.LeakyBucket(10, time.Minute), sluice.LeakyBucket(10, time.Hour), 9, 0},
		{"gcra 10/s to 1/s, burst 10 kept", sluice.GCRA(10, time.Second), sluice.GCRA(1, time.Second).WithBurst(10), 9, 0},
		{"gcra 10/1m to 10/1h of burst 1", sluice.GCRA(10, time.Minute), sluice.GCRA(10, time.Hour).WithBurst(1), 0, time.Minute},
		{"token bucket 10/1m to 10/1h of burst 1", sluice.TokenBucket(10, time.Minute), sluice.TokenBucket(10, time.Hour).WithBurst(1), 0, time.Minute},
		{"gcra 10/1h to 7/1h of burst 7", sluice.GCRA(10, time.Hour), sluice.GCRA(7, time.Hour), 0, 0},
		{"fixed window 10/1m to 10/1h", sluice.FixedWindow(10, time.Minute), sluice.FixedWindow(10, time.Hour), 0, 0},
		{"sliding log 10/1m to 10/1h", sluice.SlidingLog(10, time.Minute), sluice.SlidingLog(10, time.Hour), 0, 0},
		{"sliding counter 10/1m to 10/1h", sluice.SlidingCounter(10, time.Minute), sluice.SlidingCounter(10, time.Hour), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 1, 5, 10, 0, 17, 0, time.UTC)
			s := memory.New(memory.WithClock(func() time.Time { return now }), memory.WithClockResolution(0), memory.WithSweepInterval(0))
			defer s.Close()
			old, cur := tc.old.Named("speed"), tc.cur.Named("speed")
			decide := func(l sluice.Limit) sluice.Status {
				t.Helper()
				out := make([]sluice.Status, 1)
				if err := s.Apply(context.Background(), []sluice.Check{{Key: "client", Limit: l, Cost: 1}}, out); err != nil {
					t.Fatal(err)
				}
				return out[0]
			}
			for i := range 10 {
				if !decide(old).Allowed {
					t.Fatalf("request %d under %v refused", i+1, old)
				}
			}
			// The reload, at the same instant: the old limit's 10 are spent.
			admitted := 0
			var refused sluice.Status
			for range 20 {
				if refused = decide(cur); !refused.Allowed {
					break
				}
				admitted++
			}
			if admitted != tc.atOnce {
				t.Fatalf("a client that spent all 10 of %v is admitted %d at once under %v (burst %d), want %d",
					old, admitted, cur, cur.Burst(), tc.atOnce)
			}
			if tc.next == 0 {
				return
			}
			if refused.RetryAfter != tc.next {
				t.Errorf("then told to retry after %v, want %v", refused.RetryAfter, tc.next)
			}
			now = now.Add(tc.next)
			if !decide(cur).Allowed || decide(cur).Allowed {
				t.Errorf("after %v, want one admitted and the next refused", tc.next)
			}
		})
	}
}
