package switchover_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/reliability"
	"github.com/sluice-dev/sluice/redis"
)

// sentinelRun starts two instances on a Sentinel group under load, applies
// fault to the group's master, waits for the new master and for both
// instances to decide on Redis again, and returns what the clients saw,
// when the fault came, when the instances were seen writing to the new
// master, and the instances.
func sentinelRun(t *testing.T, fault func(f *redistest.SentinelFixture, master *redistest.Server)) (*reliability.Seen, time.Time, time.Time, []*redis.Guarded, *realtest.Buffer) {
	t.Helper()
	f := redistest.SentinelGroup(t, "primary")
	gs, stores, logs := instancesOf(t, redis.Options{Mode: redis.ModeSentinel, Addrs: f.Addrs(), MasterSet: f.Name})
	fleet := reliability.StartFleet(stores, keys(4), perSecond, pace)
	time.Sleep(1500 * time.Millisecond)
	old, err := f.Master()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	fault(f, old)
	m, err := f.WaitMaster(old, 20*time.Second)
	if err != nil {
		fleet.Stop()
		t.Fatal(err)
	}
	t.Logf("%s is master %v after the fault", m.Addr, time.Since(at).Round(time.Millisecond))
	if err := writesReach(m, "client-0", 20*time.Second); err != nil {
		t.Error(err)
	}
	switched := time.Now()
	t.Logf("the instances write to %s %v after the fault", m.Addr, switched.Sub(at).Round(time.Millisecond))
	if !fleet.WaitRedis(1500*time.Millisecond, 20*time.Second) {
		t.Errorf("decisions still local 20 s after the fault (the last at %+d ms)", fleet.LastLocal().Sub(at).Milliseconds())
	}
	if last := fleet.LastLocal(); !last.IsZero() {
		t.Logf("last local admission %+d ms after the fault", last.Sub(at).Milliseconds())
	}
	return fleet.Stop(), at, switched, gs, logs
}

// The Sentinel master is killed (SIGKILL) while two instances decide: the
// Sentinels promote the replica, and meanwhile each instance decides on its
// share, starting from its share of what Redis last told it. No client sees
// an error, and no second admits more than the promise and one instance's
// share.
func TestSentinelMasterKilled(t *testing.T) {
	seen, at, _, _, _ := sentinelRun(t, func(_ *redistest.SentinelFixture, m *redistest.Server) { m.Kill() })
	judge(t, seen, at, quantity+share)
}

// SENTINEL FAILOVER: the replica is promoted while the old master still
// answers, and acknowledges writes until the Sentinels demote it; those
// writes are lost. The instances' watch sees the new master's history end
// before the old one's last offset: the loss is counted and logged.
//
// The units of the lost writes are admitted again (redis/doc.go, Failover):
// in a second from the fault to the switch, at most the promise more (the
// old master's window held at most the promise), on top of the promise and
// a share; in every other second, the promise and a share. The longer the
// Sentinels take to demote the old master, the more of a second's units
// are lost: on a loaded machine, often more than a share.
func TestSentinelFailoverLosesWritesAndSaysSo(t *testing.T) {
	seen, at, switched, gs, logs := sentinelRun(t, func(f *redistest.SentinelFixture, _ *redistest.Server) {
		f.Sentinels[0].MustDo("SENTINEL", "FAILOVER", f.Name)
	})
	judge(t, seen, at, 2*quantity+share)
	from, to := at.Truncate(time.Second), switched.Truncate(time.Second).Add(time.Second)
	for _, span := range [][2]time.Time{{{}, from}, {to, {}}} {
		if key, w := seen.Worst(span[0], span[1]); w.Admitted > quantity+share {
			t.Errorf("%s admitted %d units in the second from %+d ms after the fault, outside the switch's seconds (%+d ms to %+d ms): more than %d",
				key, w.Admitted, w.Start.Sub(at).Milliseconds(), from.Sub(at).Milliseconds(), to.Sub(at).Milliseconds(), quantity+share)
		}
	}
	var lost, bytes int64
	for _, g := range gs {
		l := g.Losses()
		lost, bytes = lost+l.LostWrites, bytes+l.LostBytes
	}
	t.Logf("lost writes seen by the instances: %d masters, %d bytes of replication stream", lost, bytes)
	if lost == 0 {
		t.Errorf("no instance saw the writes the old master acknowledged after the promotion; log:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "redis lost acknowledged writes") {
		t.Errorf("no log line says writes were lost; log:\n%s", logs)
	}
}
