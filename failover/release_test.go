package failover_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// Leases pass through the over-limit cache and the failover store to the store
// that holds them, and a release drops the key's remembered denial.
func TestReleaseThroughCacheAndFailover(t *testing.T) {
	remote, local := memory.New(), memory.New()
	defer remote.Close()
	defer local.Close()
	cache := overlimit.New(remote, overlimit.Options{})
	store, err := failover.New(cache, local, failover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.NewLimiter(store)
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}
	first, err := allow(lim, ctx, checks...)
	if err != nil || !first.Allowed {
		t.Fatalf("first: %+v %v", first, err)
	}
	if d, _ := allow(lim, ctx, checks...); d.Allowed {
		t.Fatal("second admitted while the first holds the only slot")
	}
	if err := lim.Release(ctx, checks, &first); err != nil {
		t.Fatal(err)
	}
	if d, _ := allow(lim, ctx, checks...); !d.Allowed {
		t.Fatal("the released slot is still held (or the cache still remembers the denial)")
	}
}

// hangingReleaser is a flaky primary that gives leases back to its remote
// store, and whose Release, like its Apply, waits for its context while
// the primary hangs.
type hangingReleaser struct {
	*storetest.Flaky
	remote   *memory.Store
	releases atomic.Int64
}

func (s *hangingReleaser) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	s.releases.Add(1)
	if s.Hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.remote.Release(ctx, checks, leases)
}

// While the breaker keeps calls away from a primary that hangs, a release
// does not wait for it either: the local store gets its leases back at
// once, and a release of a lease the primary holds says it expires by
// itself.
func TestReleaseSkipsAPrimaryBehindAnOpenBreaker(t *testing.T) {
	r := newFailoverRig(t, failover.Options{})
	primary := &hangingReleaser{Flaky: r.primary, remote: r.remote}
	f := mustFailover(primary, r.local, failover.Options{Timeout: time.Second, Breaker: failover.BreakerOptions{Clock: r.clk.Now}})
	lim := sluice.NewLimiter(f)
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}
	onPrimary, err := allow(lim, ctx, checks...)
	if err != nil || !onPrimary.Allowed {
		t.Fatalf("on the primary: %+v, %v", onPrimary, err)
	}
	r.primary.Fail(storetest.ErrRedisDown)
	for range failover.DefaultBreakerFailures {
		if _, err := allow(lim, ctx, sluice.Check{Key: "k", Limit: checks[0].Limit}); err != nil {
			t.Fatal(err)
		}
	}
	if st := f.Stats(); st.Breaker != failover.BreakerOpen {
		t.Fatalf("stats %+v, want open", st)
	}
	primary.Hang = true
	held, err := allow(lim, ctx, checks...)
	if err != nil || !held.Allowed {
		t.Fatalf("the fallback: %+v, %v", held, err)
	}
	start := time.Now()
	if err := lim.Release(ctx, checks, &held); err != nil {
		t.Errorf("Release of the local lease: %v", err)
	}
	err = lim.Release(ctx, checks, &onPrimary)
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Release took %v: it waited for a primary behind an open breaker", took)
	}
	if !errors.Is(err, failover.ErrCircuitOpen) {
		t.Errorf("Release: %v, want an error wrapping ErrCircuitOpen (the primary's leases expire by themselves)", err)
	}
	if n := primary.releases.Load(); n != 0 {
		t.Errorf("the primary was asked to release %d times behind an open breaker", n)
	}
	if d, err := allow(lim, ctx, checks...); err != nil || !d.Allowed {
		t.Errorf("after the release: %+v, %v; want the local slot back", d, err)
	}
}
