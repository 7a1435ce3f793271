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

// After a Sentinel failover, an instance none of whose calls failed —
// idle meanwhile, or its leases covering them — returns to the new master
// as one whose calls failed does (by its share and Redis together, for
// the return period): another instance may have fallen back during the
// switch and not have charged yet. It decided on the new master alone at
// once.
func TestAnInstanceThatDidNotFailReturnsToANewMaster(t *testing.T) {
	t.Parallel()
	f := redistest.SentinelGroup(t, "primary")
	g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeSentinel, Addrs: f.Addrs(), MasterSet: f.Name,
		Timeout: time.Second, OnStoreError: failover.Local, Instances: 2}, redis.WithBatching(0))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c := sluice.Check{Key: "new-master", Limit: sluice.FixedWindow(100, 400*24*time.Hour), Cost: 1}
	if spendN(t, g, c, 1) != 1 {
		t.Fatal("refused before the failover")
	}
	old, err := f.Master()
	if err != nil {
		t.Fatal(err)
	}
	f.Sentinels[0].MustDo("SENTINEL", "FAILOVER", f.Name)
	m, err := f.WaitMaster(old, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the store follows the switch and reads the new master
	peek := []sluice.Check{{Key: "other", Limit: c.Limit}}
	if err := g.Apply(context.Background(), peek, make([]sluice.Status, 1)); err != nil {
		t.Fatal(err)
	}
	if st := g.Failover().Stats(); st.StoreErrors != 0 || st.FallbackDecisions != 0 {
		t.Fatalf("the instance failed during the switch (%+v): it returns for that reason, the test says nothing", st)
	}
	if g.Failover().Direct([]sluice.Check{c}) {
		t.Errorf("on the new master %s, an instance that never failed decides alone at once: %+v", m.Addr, g.Failover().Stats())
	}
}
