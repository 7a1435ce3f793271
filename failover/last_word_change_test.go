package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// A limit changed under the same ID (a reload) while the primary is down
// keeps the primary's state, which the primary reads under the new
// parameters: the fallback starts the key from the primary's last word as
// said of the new limit — what the old one had used is used of the new
// one — never from a whole share. It admits at most what the primary
// holds under the new limit (exactly that for a fixed window), and
// nothing when the new limit has less than was used. A limit of another
// algorithm under that ID is a state the primary starts afresh: the
// fallback starts from its whole share, as the primary would.
func TestAChangedLimitStartsTheFallbackFromThePrimarysLastWord(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after sluice.Limit
		used          int64
		want          int64 // what the fallback admits; -1: at most what the primary holds
	}{
		{"a fixed window raised from 10 to 12 an hour, 10 used: 2 left",
			sluice.FixedWindow(10, time.Hour), sluice.FixedWindow(12, time.Hour), 10, 2},
		{"a fixed window lowered from 10 to 8 an hour, 5 used: 3 left",
			sluice.FixedWindow(10, time.Hour), sluice.FixedWindow(8, time.Hour), 5, 3},
		{"a fixed window lowered from 10 to 4 an hour, 5 used: none left",
			sluice.FixedWindow(10, time.Hour), sluice.FixedWindow(4, time.Hour), 5, 0},
		{"a token bucket's burst raised from 10 to 14, 6 used: 8 left",
			sluice.TokenBucket(10, time.Hour), sluice.TokenBucket(10, time.Hour).WithBurst(14), 6, 8},
		{"a token bucket raised from 10 to 12 an hour, 10 used",
			sluice.TokenBucket(10, time.Hour), sluice.TokenBucket(12, time.Hour), 10, -1},
		{"a GCRA raised from 10 to 20 an hour, 7 used",
			sluice.GCRA(10, time.Hour), sluice.GCRA(20, time.Hour), 7, -1},
		{"a sliding counter raised from 10 to 12 an hour, 9 used",
			sluice.SlidingCounter(10, time.Hour), sluice.SlidingCounter(12, time.Hour), 9, -1},
		{"a sliding log raised from 10 to 15 an hour, 10 used",
			sluice.SlidingLog(10, time.Hour), sluice.SlidingLog(15, time.Hour), 10, -1},
		{"a fixed window that became a token bucket: a state afresh",
			sluice.FixedWindow(10, time.Hour), sluice.TokenBucket(12, time.Hour).Named("per-hour"), 10, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFailoverRig(t, failover.Options{Instances: 1})
			if tc.before.ID() != tc.after.ID() {
				t.Fatalf("IDs %q and %q differ", tc.before.ID(), tc.after.ID())
			}
			spent := sluice.Check{Key: "k", Limit: tc.before, Cost: tc.used}
			if !r.allow(t, spent).Allowed {
				t.Fatalf("the primary refused %d of %v", tc.used, tc.before)
			}
			r.primary.Fail(errors.New("down"))
			admitted := int64(0)
			for range 30 {
				if !r.allow(t, sluice.Check{Key: "k", Limit: tc.after, Cost: 1}).Allowed {
					break
				}
				admitted++
			}
			out := make([]sluice.Status, 1)
			if err := r.remote.Apply(context.Background(), []sluice.Check{{Key: "k", Limit: tc.after}}, out); err != nil {
				t.Fatal(err)
			}
			holds := out[0].Remaining
			switch {
			case tc.want >= 0 && admitted != tc.want:
				t.Errorf("the fallback admitted %d under %v after %d used of %v, want %d (the primary holds %d)",
					admitted, tc.after, tc.used, tc.before, tc.want, holds)
			case admitted > holds:
				t.Errorf("the fallback admitted %d under %v after %d used of %v; the primary holds %d",
					admitted, tc.after, tc.used, tc.before, holds)
			}
		})
	}
}

// A reload that changes a limit under the same ID keeps its state, and
// what the primary said of it is ordered as any other answer: the late
// reply of a take decided under the old parameters, before a decision
// under the new ones, does not replace that later word, however its
// limit differs. Read under the new parameters it would leave more than
// the primary has: 100 → 80 reloaded, the primary decided 70 used (10
// left of 80) after the late take's 50 used; started from 30 left, the
// fallback of one instance would admit 20 beyond the limit in the window.
func TestALateReplyUnderTheOldLimitDoesNotReplaceALaterDecision(t *testing.T) {
	ctx := context.Background()
	clk := storetest.NewClock()
	inner := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	local := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer inner.Close()
	defer local.Close()
	flaky := &storetest.Flaky{Next: inner}
	f, err := failover.New(flaky, local, failover.Options{OnError: failover.Local, Instances: 1,
		Breaker: failover.BreakerOptions{Clock: clk.Now}})
	if err != nil {
		t.Fatal(err)
	}
	before := sluice.FixedWindow(100, time.Hour).Named("x")
	reloaded := sluice.FixedWindow(80, time.Hour).Named("x")
	at := sluice.MicrosSinceEpoch(clk.Now())
	// Redis decides a take under the old parameters (50 used), then one
	// under the new (70 used, 10 left of 80); the first reply arrives last.
	f.Heard([]sluice.Check{{Key: "k", Limit: reloaded, Cost: 1}},
		[]sluice.Status{{Allowed: true, Remaining: 10, ResetAfter: time.Hour}}, []int64{at + 2000})
	f.Heard([]sluice.Check{{Key: "k", Limit: before, Cost: 1}},
		[]sluice.Status{{Allowed: true, Remaining: 50, ResetAfter: time.Hour}}, []int64{at + 1000})

	flaky.Fail(storetest.ErrRedisDown)
	clk.Advance(time.Second)
	admitted := 0
	one := make([]sluice.Status, 1)
	for range 100 {
		if err := f.Apply(ctx, []sluice.Check{{Key: "k", Limit: reloaded, Cost: 1}}, one); err != nil {
			t.Fatal(err)
		}
		if one[0].Allowed {
			admitted++
		}
	}
	if admitted > 10 {
		t.Errorf("the fallback admitted %d of k, which Redis last said had 10 left of 80 in its window: "+
			"a late reply decided under the old parameters replaced that word", admitted)
	}
}
