package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
)

// instance is one sluice process: its own client, over-limit cache and
// failover, whose local clocks (cache, breaker, fallback) are skewed by skew.
// The failover waits for Redis as long as the store does (testTimeout): a
// call it decided locally, with no charge to Redis, would leave Redis's
// count one short of the other instances'.
func instance(t *testing.T, srv *redistest.Server, skew time.Duration) (*sluice.Limiter, *failover.Store) {
	clock := func() time.Time { return time.Now().Add(skew) }
	local := memory.New(memory.WithClock(clock), memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	cache := overlimit.New(redis.New(srv.Client(t), redis.WithTimeout(testTimeout)), overlimit.Options{Clock: clock})
	fo, err := failover.New(cache, local, failover.Options{Timeout: testTimeout, Breaker: failover.BreakerOptions{Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	return sluice.NewLimiter(fo), fo
}

// Time comes from Redis: instances whose local clocks are 5 s apart either
// way decide exactly the same, each over its own key with the same history.
func TestSkewedInstancesDecideTheSame(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	skews := []time.Duration{-5 * time.Second, 0, 5 * time.Second}
	var lims []*sluice.Limiter
	var fos []*failover.Store
	for _, s := range skews {
		lim, fo := instance(t, srv, s)
		lims, fos = append(lims, lim), append(fos, fo)
	}
	// Every call is Redis's to decide: one the failover decided would say
	// nothing of skew.
	defer func() {
		for i, fo := range fos {
			if st := fo.Stats(); st.FallbackDecisions != 0 {
				t.Errorf("instance skewed %v decided %d calls without Redis: %+v", skews[i], st.FallbackDecisions, st)
			}
		}
	}()
	limits := []sluice.Limit{sluice.FixedWindow(7, time.Hour), sluice.SlidingLog(7, time.Hour),
		sluice.SlidingCounter(7, time.Hour), sluice.GCRA(7, time.Hour), sluice.TokenBucket(7, time.Hour).WithBurst(3)}
	ctx := context.Background()
	for _, l := range limits {
		var apart time.Duration // the most any step's calls were apart
		for step := range 12 {
			var first sluice.Decision
			begin := time.Now()
			for i, lim := range lims {
				d, err := allow(lim, ctx, sluice.Check{Key: fmt.Sprintf("%v-%d", l.Algorithm(), i), Limit: l, Cost: 1})
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = d
					continue
				}
				// Calls are microseconds to milliseconds apart on Redis's
				// clock (more on a loaded machine): compare what does not
				// move in that time, and the waits to within twice how far
				// apart the instances' calls were, in this step or the
				// earlier ones that wrote their states, plus a millisecond
				// of rounding (rounding them to seconds would split two
				// waits on either side of a half second). Twice: a refusal
				// the over-limit cache answers counts its wait down from
				// when Redis's answer arrived, not from Redis's time, so
				// the reply's way back (within apart too) adds to the gap
				// between the states' times.
				apart = max(apart, time.Since(begin))
				if gap := d.RetryAfter - first.RetryAfter; d.Allowed != first.Allowed || d.Remaining != first.Remaining ||
					gap < -2*apart-time.Millisecond || gap > 2*apart+time.Millisecond {
					t.Fatalf("%v step %d: instance skewed %v decided %+v, unskewed-by-%v %+v",
						l.Algorithm(), step, skews[i], d, skews[0], first)
				}
			}
		}
	}
}

// An instance that dies holding concurrency leases frees them after the
// lease time: another instance is refused until then, admitted after.
func TestLeasesOfADeadInstanceExpire(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	limit := sluice.Concurrency(10, time.Second)
	dying := sluice.NewLimiter(redis.New(srv.Client(t), redis.WithTimeout(testTimeout)))
	alive := sluice.NewLimiter(redis.New(srv.Client(t), redis.WithTimeout(testTimeout)))
	ctx := context.Background()
	check := sluice.Check{Key: "pool", Limit: limit, Cost: 1}
	// Each lease runs from its own admission: the first one's frees a
	// slot, and no lease began before taken.
	taken := time.Now()
	for i := range 10 {
		if d, err := allow(dying, ctx, check); err != nil || !d.Allowed {
			t.Fatalf("lease %d: %+v %v", i, d, err)
		}
	}
	// The holder dies here: its leases are never released.
	d, err := allow(alive, ctx, check)
	if err != nil || d.Allowed {
		t.Fatalf("the other instance was admitted while every slot is held: %+v %v", d, err)
	}
	for {
		d, err := allow(alive, ctx, check)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			break
		}
		if time.Since(taken) > 10*time.Second {
			t.Fatal("the dead instance's leases had not expired after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	freed := time.Since(taken)
	if freed < 900*time.Millisecond {
		t.Errorf("leases freed after %v, before their 1s lease time", freed)
	}
	t.Logf("leases of the dead instance freed after %v (lease 1s)", freed)
}
