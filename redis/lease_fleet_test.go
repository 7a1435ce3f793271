package redis_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/redis"
)

// admission is one check a fleet admitted: cost units at a virtual µs.
type admission struct{ at, cost int64 }

// fleetClock is a virtual clock shared by a simulated fleet and the
// scripts (WithTimeForTesting): µs since sluice.Epoch.
type fleetClock struct{ us atomic.Int64 }

func (c *fleetClock) now() time.Time { return sluice.TimeFromMicros(c.us.Load()) }

// leasableLimit draws a limit of a leasable algorithm with windows of
// 10 ms – 2 s and small quantities, so that leases run out, end with their
// window and shrink within a run, or a calendar day of small quantities.
func leasableLimit(t *rapid.T, name string) sluice.Limit {
	q := rapid.Int64Range(1, 400).Draw(t, name+"-q")
	w := time.Duration(rapid.Int64Range(10, 2000).Draw(t, name+"-w-ms")) * time.Millisecond
	switch rapid.IntRange(0, 5).Draw(t, name+"-alg") {
	case 5:
		return calendarDay(t, name)
	case 0:
		return sluice.FixedWindow(q, w).Named(name)
	case 1:
		return sluice.SlidingCounter(q, w).Named(name)
	case 2:
		return sluice.TokenBucket(q, w).WithBurst(rapid.Int64Range(1, 80).Draw(t, name+"-b")).Named(name)
	case 3:
		return sluice.GCRA(q, w).WithBurst(rapid.Int64Range(1, 80).Draw(t, name+"-b")).Named(name)
	}
	return sluice.LeakyBucket(q, w).WithBurst(rapid.Int64Range(1, 80).Draw(t, name+"-b")).Named(name)
}

// replayAdmits reports whether one exact limiter — the Go kernel, starting
// from a key never seen — admits every admission, replayed in time order:
// that is the limit's promise (at most Q per window, or within the
// bucket), whoever admitted them. It returns the first it refuses.
func replayAdmits(l sluice.Limit, adm []admission) (admission, bool) {
	slices.SortStableFunc(adm, func(a, b admission) int { return int(a.at - b.at) })
	var s sluice.State
	for _, a := range adm {
		next, st := storetest.Decided(l.Decide(s, a.at, a.cost))
		if !st.Allowed {
			return a, false
		}
		s = next
	}
	return admission{}, true
}

// A simulated fleet — 2 to 4 leasing instances on one real redis-server,
// a virtual clock, random traffic, costs and lease sizes, a second limit in
// some calls, leases given back at random — never admits what one exact
// limiter would refuse: replaying every admission of the fleet, in time
// order, through the kernel of each limit admits them all.
func TestLeasedFleetNeverExceedsThePromise(t *testing.T) {
	t.Parallel()
	checkFleet(t, "fleet", leasableLimit)
}

// The same, the first limit a calendar day: leases taken before its end
// are not spent after it.
func TestLeasedFleetKeepsTheCalendarsPromise(t *testing.T) {
	t.Parallel()
	checkFleet(t, "calendar", func(t *rapid.T, name string) sluice.Limit {
		if name != "a" {
			return leasableLimit(t, name)
		}
		return calendarDay(t, name)
	})
}

// calendarDay draws a calendar day of a small quantity, starting at any
// time of the UTC day.
func calendarDay(t *rapid.T, name string) sluice.Limit {
	q := rapid.Int64Range(1, 400).Draw(t, name+"-q")
	off := time.Duration(rapid.Int64Range(-86_399_999, 86_399_999).Draw(t, name+"-offset-ms")) * time.Millisecond
	return sluice.Calendar(q, sluice.Day).WithOffset(off).Named(name)
}

// checkFleet runs the fleet of TestLeasedFleetNeverExceedsThePromise with
// limits drawn by draw.
func checkFleet(t *testing.T, prefix string, draw func(t *rapid.T, name string) sluice.Limit) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	var runs, total, calls, prefetches atomic.Int64
	defer func() {
		t.Logf("local %d of %d calls; %d leases taken at low water", total.Load(), calls.Load(), prefetches.Load())
	}()
	ctx := context.Background()
	rapid.Check(t, func(t *rapid.T) {
		run := runs.Add(1)
		clock := &fleetClock{}
		clock.us.Store(rapid.Int64Range(0, 1<<40).Draw(t, "start"))
		a, b := draw(t, "a"), draw(t, "b")
		opts := redis.LeaseOptions{
			Mode:     redis.LeaseAuto,
			MaxUnits: rapid.Int64Range(1, 40).Draw(t, "max-units"),
			MaxAge:   time.Duration(rapid.Int64Range(1, 3000).Draw(t, "max-age-ms")) * 3 * time.Millisecond,
			Idle:     time.Duration(rapid.Int64Range(1, 3000).Draw(t, "idle-ms")) * time.Millisecond,
		}
		n := rapid.IntRange(2, 4).Draw(t, "instances")
		fleet := make([]*redis.Leased, n)
		for i := range fleet {
			st := redis.New(client, redis.WithTimeForTesting(clock.now), redis.WithBatching(0), redis.WithTimeout(testTimeout))
			fleet[i] = redis.NewLeased(st, st, n, opts)
		}
		defer func() {
			for _, l := range fleet {
				l.Close()
				st := l.Stats()
				total.Add(st.Local)
				calls.Add(st.Calls)
				prefetches.Add(st.Prefetches)
			}
		}()
		key := fmt.Sprintf("%s-%d", prefix, run)
		var admA, admB []admission
		steps := rapid.IntRange(20, 400).Draw(t, "steps")
		wa := a.Window().Microseconds()
		if a.Period() != 0 {
			// Traffic paced as for a 2 s window, from shortly before the
			// end of a calendar day: leases taken in one day meet the next.
			wa = 2_000_000
			_, end := storetest.Decided(a.Decide(sluice.State{}, clock.us.Load(), 1))
			clock.us.Add(end.ResetAfter.Microseconds() - rapid.Int64Range(0, int64(steps)*wa/100).Draw(t, "before-midnight"))
		}
		for range steps {
			// Dense traffic, with pauses now and then: long enough to
			// refill a bucket, or to reach into a lease's life.
			step := wa/50 + 1
			switch rapid.IntRange(0, 9).Draw(t, "pause") {
			case 0:
				step = wa
			case 1, 2:
				step = wa / 4
			}
			clock.us.Add(rapid.Int64Range(0, step).Draw(t, "advance"))
			l := fleet[rapid.IntRange(0, n-1).Draw(t, "instance")]
			if rapid.IntRange(0, 30).Draw(t, "return") == 0 {
				if err := l.Return(ctx); err != nil {
					t.Fatal(err)
				}
				continue
			}
			burst := 1 // now and then, many calls at one instant
			if rapid.IntRange(0, 9).Draw(t, "bursty") == 0 {
				burst = rapid.IntRange(2, 100).Draw(t, "burst")
			}
			for range burst {
				checks := []sluice.Check{{Key: key, Limit: a, Cost: rapid.Int64Range(1, 3).Draw(t, "cost-a")}}
				if rapid.IntRange(0, 3).Draw(t, "two") == 0 {
					checks = append(checks, sluice.Check{Key: key, Limit: b, Cost: rapid.Int64Range(1, 3).Draw(t, "cost-b")})
				}
				out := make([]sluice.Status, len(checks))
				if err := l.Apply(ctx, checks, out); err != nil {
					t.Fatal(err)
				}
				if !all(out) {
					continue
				}
				now := clock.us.Load()
				admA = append(admA, admission{now, checks[0].Cost})
				if len(checks) == 2 {
					admB = append(admB, admission{now, checks[1].Cost})
				}
			}
		}
		for _, c := range []struct {
			l   sluice.Limit
			adm []admission
		}{{a, admA}, {b, admB}} {
			if bad, ok := replayAdmits(c.l, c.adm); !ok {
				t.Fatalf("%v: the fleet admitted %d units at %d that one exact limiter refuses (admitted: %v)",
					c.l, bad.cost, bad.at, c.adm)
			}
		}
	})
}

func all(out []sluice.Status) bool {
	for _, s := range out {
		if !s.Allowed {
			return false
		}
	}
	return true
}
