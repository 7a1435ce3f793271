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

// A take Redis fails is a store error like any other, and is counted: it
// reaches Redis around the failover, whose counts never see it (a take
// that timed out on a slow Redis, the call then decided by the failover on
// a Redis that answered it, left no trace in any count).
func TestATakeRedisFailsIsCounted(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{Instances: 1, OnStoreError: failover.Local, Timeout: 100 * time.Millisecond})
	c := sluice.Check{Key: "failed-take", Limit: sluice.FixedWindow(1000, 400*24*time.Hour), Cost: 1}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.Apply(ctx, []sluice.Check{c}, make([]sluice.Status, 1))
	if st := settled(t, g.Leases()); st.Failures != 0 {
		t.Errorf("a take whose caller gave up: %+v, want no failure of Redis counted", st)
	}
	srv.Pause()
	spendN(t, g, c, 1)
	srv.Resume()
	if st := settled(t, g.Leases()); st.Failures < 1 {
		t.Errorf("a take sent to a stopped Redis: %+v, want it counted in Failures", st)
	}
}
