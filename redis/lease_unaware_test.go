package redis_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// An instance that spends its leases through an outage asks Redis
// nothing, so its failover sees no failure; once Redis is back it decided
// on Redis alone at once, before the instance that fell back had charged
// what its share admitted, and that charge then found nothing left: the
// fleet admitted the fallback's units beyond the limit. It returns to
// Redis as an instance that failed does (see Failover in the package
// documentation): by its share and by Redis together, for the return
// period, so that the other's charge lands first.
func TestAnInstanceLeasingThroughAnOutageReturnsToo(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	o := redis.Options{Instances: 2, OnStoreError: failover.Local, Timeout: 100 * time.Millisecond,
		Lease: redis.LeaseOptions{MaxUnits: 20, MaxAge: time.Hour, Idle: time.Hour}}
	a, b := openLeased(t, srv, o), openLeased(t, srv, o)
	const quota = 1000
	c := sluice.Check{Key: "unaware", Limit: sluice.FixedWindow(quota, 400*24*time.Hour), Cost: 1}

	admitted := 0
	for range 5 {
		admitted += spendN(t, b, c, 4) + spendN(t, a, c, 4)
		settled(t, a.Leases())
		settled(t, b.Leases())
	}
	held := b.Leases().Stats().Held
	if held < 2 {
		t.Fatalf("b holds %d units of lease, want some to spend through the outage", held)
	}

	srv.Pause()
	outage := spendN(t, a, c, quota) + spendN(t, b, c, int(held)-1)
	srv.Resume()
	if a.Failover().Stats().FallbackDecisions == 0 || b.Failover().Stats().StoreErrors != 0 {
		t.Fatalf("a should have fallen back and b seen no failure: a %+v, b %+v", a.Failover().Stats(), b.Failover().Stats())
	}
	after := 0
	// Past a's breaker period and the return periods that follow it.
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		after += spendN(t, b, c, 20) + spendN(t, a, c, 5)
	}
	total := admitted + outage + after
	t.Logf("admitted %d in the window of a limit of %d: %d before the outage, %d during it, %d after", total, quota, admitted, outage, after)
	if total > quota+quota/100 {
		t.Errorf("admitted %d in the window of a limit of %d: %d before the outage, %d during it (a: failover %+v), %d after; b: leases %+v, failover %+v",
			total, quota, admitted, outage, a.Failover().Stats(), after, b.Leases().Stats(), b.Failover().Stats())
	}
}
