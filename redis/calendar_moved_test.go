package redis_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// A fixed window's count belongs to the window that holds its last charge
// under the limit it is decided by, and fixed_window.lua, the memory store
// and sluice.DecideBatch decide it alike under other windows of its limit
// (a reload moving a calendar, lengthening a window): kept while its last
// charge falls in the current window, dropped from the next on; a refund
// of a charge gives back exactly what it took while the count is kept,
// and a clock that steps back counts against the window of the last
// charge.
func TestAFixedWindowOfOtherWindowsIsDecidedAlikeInRedisAndMemory(t *testing.T) {
	month := func(off time.Duration) sluice.Limit {
		return sluice.Calendar(5, sluice.Month).WithOffset(off).Named("per-month")
	}
	utc, west, fifth, east := month(0), month(5*time.Hour), month(4*24*time.Hour), month(-5*time.Hour)
	minute := sluice.FixedWindow(5, time.Minute).Named("quota")
	hour := sluice.FixedWindow(5, time.Hour).Named("quota")
	mar10 := time.Date(2027, 3, 10, 12, 0, 0, 0, time.UTC)
	check := func(l sluice.Limit, cost int64) []sluice.Check {
		return []sluice.Check{{Key: "u", Limit: l, Cost: cost}}
	}
	step := func(d time.Duration, l sluice.Limit, cost int64, allowed bool) conformance.Step {
		return conformance.Step{Advance: d, Checks: check(l, cost), Want: []bool{allowed}}
	}
	refunding := func(s conformance.Step, k int) conformance.Step {
		s.Refund = []conformance.Refund{{Step: k}}
		return s
	}
	day := 24 * time.Hour
	toApr1 := 21*day + 12*time.Hour // from 10 March 12:00 to 1 April 00:00 UTC
	scenarios := []conformance.Scenario{
		{Name: "a month moved west counts until the new month ends", Start: mar10, Steps: []conformance.Step{
			step(0, utc, 5, true),
			step(0, west, 0, true),
			step(0, west, 1, false),
			step(toApr1+5*time.Hour-time.Microsecond, west, 1, false),
			step(time.Microsecond, west, 5, true),
		}},
		{Name: "a month moved to start on the 5th", Start: mar10, Steps: []conformance.Step{
			step(0, utc, 4, true),
			step(0, fifth, 2, false),
			step(0, fifth, 1, true),
			step(toApr1+4*day-time.Microsecond, fifth, 1, false),
			step(time.Microsecond, fifth, 5, true),
		}},
		{Name: "a month moved east counts until the new month ends", Start: mar10, Steps: []conformance.Step{
			step(0, utc, 5, true),
			step(0, east, 1, false),
			step(toApr1-5*time.Hour-time.Microsecond, east, 1, false),
			// The new month, which starts on 31 March 19:00 UTC, starts
			// afresh: the last charge is of the month before.
			step(time.Microsecond, east, 5, true),
		}},
		{Name: "a month moved east keeps a count last charged in the new month", Start: time.Date(2027, 3, 31, 20, 0, 0, 0, time.UTC), Steps: []conformance.Step{
			step(0, utc, 5, true),
			step(0, east, 1, false),
			step(4*time.Hour, east, 1, false),
		}},
		{Name: "a month moved west after its own month ended", Start: mar10, Steps: []conformance.Step{
			step(0, utc, 5, true),
			step(toApr1+time.Hour, west, 1, false),
			step(4*time.Hour, west, 5, true),
		}},
		{Name: "a month of the same calendar rolls over", Start: time.Date(2027, 3, 31, 12, 0, 0, 0, time.UTC), Steps: []conformance.Step{
			step(0, west, 5, true),
			step(17*time.Hour-time.Microsecond, west, 1, false),
			step(time.Microsecond, west, 5, true),
		}},
		{Name: "a minute lengthened to an hour counts to the hour's end", Start: time.Date(2027, 3, 10, 11, 34, 0, 0, time.UTC), Steps: []conformance.Step{
			step(0, minute, 5, true),
			step(10*time.Minute, hour, 1, false),
			step(16*time.Minute-time.Microsecond, hour, 1, false),
			step(time.Microsecond, hour, 5, true),
		}},
		{Name: "a charge refunded across a move gives back what it took", Start: mar10, Steps: []conformance.Step{
			step(0, utc, 2, true),
			step(time.Hour, west, 3, true),
			step(0, west, 1, false),
			refunding(step(time.Hour, west, 2, true), 0),
			step(0, west, 1, false),
		}},
		{Name: "a clock stepped back counts against the last charge's window", Start: time.Date(2027, 3, 1, 0, 30, 0, 0, time.UTC), Steps: []conformance.Step{
			step(0, utc, 4, true),
			step(-time.Hour, utc, 1, true),
			step(0, utc, 1, false),
			refunding(step(time.Hour, utc, 1, true), 1),
			step(0, utc, 1, false),
		}},
	}
	client := redistest.Standalone(t).Client(t)
	run := fmt.Sprintf("%x", time.Now().UnixNano())
	for i, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			conformance.RunScenario(t, func(t *testing.T, clock *conformance.Clock) sluice.Store {
				return redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))
			}, fmt.Sprintf("%s.calendar%d", run, i), sc)
			conformance.RunScenario(t, func(t *testing.T, clock *conformance.Clock) sluice.Store {
				s := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithoutExpiryForTesting())
				t.Cleanup(func() { s.Close() })
				return s
			}, "", sc)
		})
	}
}

// A fixed window's state that an earlier version wrote, t its window's
// start, is read as it was: its count holds in its window, a refund of a
// charge of that window gives back from it, the next charge writes its
// receipt as t, and the count is dropped at the window's end.
func TestAFixedWindowStateOfAnEarlierVersionIsReadAsBefore(t *testing.T) {
	srv := redistest.Standalone(t)
	now := time.Date(2027, 3, 10, 12, 0, 0, 0, time.UTC)
	store := redis.New(srv.Client(t), redis.WithTimeForTesting(func() time.Time { return now }), redis.WithTimeout(testTimeout))
	ctx := context.Background()
	l := sluice.Calendar(5, sluice.Month).Named("fw-old")
	start := sluice.MicrosSinceEpoch(time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC))
	srv.MustDo("SET", redis.Key("u", "fw-old"), "1 "+strconv.FormatInt(start, 10)+" 4 0", "PX", "100000000000")
	out := make([]sluice.Status, 1)
	apply := func(cost int64) sluice.Status {
		t.Helper()
		if err := store.Apply(ctx, []sluice.Check{{Key: "u", Limit: l, Cost: cost}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	if st := apply(0); st.Remaining != 1 {
		t.Fatalf("an earlier version's 4 of March: %d left, want 1", st.Remaining)
	}
	if err := store.Refund(ctx, []sluice.Check{{Key: "u", Limit: l, Cost: 2}}, []int64{start + 3600e6}); err != nil {
		t.Fatal(err)
	}
	st := apply(3)
	if !st.Allowed || st.Remaining != 0 || st.Charged != sluice.MicrosSinceEpoch(now) {
		t.Fatalf("after a refund of 2 of March: %+v, want 3 admitted, none left, the receipt now", st)
	}
	_, want, _ := l.Decide(sluice.State{T: start, A: 2}, sluice.MicrosSinceEpoch(now), 3)
	if want.Remaining != st.Remaining || want.ResetAfter != st.ResetAfter || want.Charged != st.Charged {
		t.Errorf("Redis %+v, the Go kernel %+v", st, want)
	}
	now = time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	if st := apply(0); st.Remaining != 5 {
		t.Errorf("on 1 April: %d left, want 5", st.Remaining)
	}
}
