package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A peek (cost 0) of a leased limit reports what is available at once: the
// shared remainder and the units this instance holds in its lease
// (sluice.Status.Remaining; docs/decisions.md, Leased quota), so at least
// what the check after it reports left plus the unit it spends.
func TestAPeekOfALeasedLimitCountsTheLease(t *testing.T) {
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{Lease: redis.LeaseOptions{Idle: time.Hour}})
	c := sluice.Check{Key: "peek-leased", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}
	spendN(t, g, c, 3)
	held := settled(t, g.Leases()).Held
	if held == 0 {
		t.Fatalf("no lease held: %+v", g.Leases().Stats())
	}
	look := c
	look.Cost = 0
	out := make([]sluice.Status, 1)
	if err := g.Apply(context.Background(), []sluice.Check{look}, out); err != nil {
		t.Fatal(err)
	}
	peeked := out[0].Remaining
	if err := g.Apply(context.Background(), []sluice.Check{c}, out); err != nil || !out[0].Allowed {
		t.Fatal(err, out[0])
	}
	if after := out[0].Remaining; peeked < after+1 {
		t.Errorf("a peek reported %d remaining, and the unit spent right after it %d: the peek left out the %d units "+
			"this instance held in its lease; stats %+v", peeked, after, held, g.Leases().Stats())
	}
}
