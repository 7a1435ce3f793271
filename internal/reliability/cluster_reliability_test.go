package reliability_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/reliability"
	"github.com/sluice-dev/sluice/redis"
)

// One master of a three-master Redis Cluster with a replica each is killed
// while 64 clients decide, their keys spread over the three masters. Its
// replica takes over (cluster-node-timeout 1 s); meanwhile the clients whose
// keys it served get local fallback decisions, and all of them get Redis's
// decisions again once the replica serves. No error, no leak, counters equal
// what the clients saw.
func TestClusterMasterKilledFailsOverToItsReplica(t *testing.T) {
	start := time.Now()
	c := redistest.Cluster(t, redistest.WithReplicas(1), redistest.WithNodeTimeout(time.Second))
	t.Logf("cluster of 3 masters and 3 replicas ready in %v", time.Since(start).Round(time.Millisecond))
	leaks := leakCheck(t)
	victim, heir := c.Masters[0], c.Replicas[0]

	// Which clients' keys the victim serves.
	onVictim := make([]bool, clients)
	nVictim := 0
	for i := range clients {
		key := redis.Key(perClient(i)[0].Key, hourly.Name())
		v, err := c.Masters[1].Do("CLUSTER", "KEYSLOT", key)
		if err != nil {
			t.Fatal(err)
		}
		if c.MasterOf(int(v.(int64))) == victim {
			onVictim[i] = true
			nVictim++
		}
	}
	if nVictim == 0 || nVictim == clients {
		t.Fatalf("%d of %d keys on the victim: the test needs both kinds", nVictim, clients)
	}
	victims := func(i int) bool { return onVictim[i] }
	others := func(i int) bool { return !onVictim[i] }

	s := newStack(t, redis.Options{Mode: redis.ModeCluster, Addrs: c.Addrs()}, failover.Local, 2)
	load := reliability.Start(s.lim, clients, perClient, classify(failover.Local, 2))
	time.Sleep(300 * time.Millisecond)
	healthy := load.Phase(nil)

	killed := load.Mark()
	victim.Kill()
	// When the replica reports itself master: Redis's own failover time.
	roleChange := make(chan time.Duration, 1)
	go func() {
		defer close(roleChange)
		for time.Since(killed) < 20*time.Second {
			if info, err := heir.Info("replication"); err == nil && info["role"] == "master" {
				roleChange <- time.Since(killed)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	down, err := load.WaitFor(5*time.Second, "first fallback", func(p reliability.Phase) bool { return p.Fallback > 0 })
	if err != nil {
		t.Fatal(err)
	}
	// No replica is promoted before the node timeout (1 s) has passed: from
	// then on a decision from Redis for the victim's keys is the replica's
	// (and no longer a call to the victim that ended late).
	time.Sleep(time.Second - time.Since(killed))
	duringKill := load.Phase(nil)
	promoted := load.Mark()
	if _, err := load.WaitFor(20*time.Second, "the replica serving the victim's keys", func(reliability.Phase) bool {
		return load.Phase(victims).FirstPrimary >= 0
	}); err != nil {
		t.Fatal(err)
	}
	recovered := promoted.Sub(killed) + load.Phase(victims).FirstPrimary
	settled := settle(t, load, 10*time.Second)
	vp, op := load.Phase(victims), load.Phase(others)
	seen := load.Stop()
	s.close()
	leaks()

	promotedAfter, ok := <-roleChange
	if !ok {
		t.Error("the replica did not take over")
	}
	t.Logf("the replica reported role:master %s after the kill", ms(promotedAfter))
	t.Logf("healthy: %d calls, %d fallbacks, p99 %v", healthy.Calls, healthy.Fallback, healthy.P99)
	t.Logf("master %s killed: first fallback after %s; in the first second %d calls, %d fallbacks",
		victim.Addr, ms(down.FirstFallback), duringKill.Calls, duringKill.Fallback)
	t.Logf("its %d clients decided by Redis again %s after the kill (replica promoted); last fallback of any client %s after the kill",
		nVictim, ms(recovered), ms(promoted.Sub(killed)+settled.LastFallback))
	t.Logf("from 1 s after the kill: the victim's clients %d calls, %d fallbacks; the other %d clients %d calls, %d fallbacks (%.1f%%: one breaker for the whole cluster)",
		vp.Calls, vp.Fallback, clients-nVictim, op.Calls, op.Fallback, 100*float64(op.Fallback)/float64(max(op.Calls, 1)))
	checkCounters(t, s, seen, 0)
}
