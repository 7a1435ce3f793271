package redis_test

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A Sentinel failover that loses acknowledged writes admits their units
// again, at most what the old master counted after the last write the new
// master holds (package documentation, Failover). The store sees a loss
// only as far as it had read the old master's replication offset: a crash
// right after writes its replica never received — acknowledged after the
// watch's last read — may go uncounted, and keeps that bound all the same.
//
// Here the master's replica holds 5 units of a limit of 10, then the
// replication link is held (a proxy), the master admits 5 more and is
// killed; the Sentinel promotes the replica, which counts 5: the fleet may
// admit at most 5 more in the window, 15 in all — the limit and the 5 the
// new master never received.
func TestACrashLosesAtMostWhatTheMasterAdmittedAfterItsLastReplicatedWrite(t *testing.T) {
	master := redistest.Standalone(t)
	replica := redistest.Standalone(t)
	link, err := faultproxy.New(master.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	_, port, _ := net.SplitHostPort(link.Addr())
	replica.MustDo("REPLICAOF", "127.0.0.1", port)
	waitUntil(t, 10*time.Second, "the replica to sync", func() bool {
		info, err := replica.Info("replication")
		return err == nil && info["master_link_status"] == "up"
	})
	sentinel := redistest.Sentinel(t, master, "primary")
	waitUntil(t, 20*time.Second, "the Sentinel to know the replica", func() bool {
		v, err := sentinel.Do("SENTINEL", "REPLICAS", "primary")
		list, _ := v.([]any)
		return err == nil && len(list) == 1
	})

	var logs realtest.Buffer
	g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeSentinel, Addrs: []string{sentinel.Addr},
		MasterSet: "primary", Timeout: 300 * time.Millisecond, OnStoreError: failover.Deny,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	waitUntil(t, 10*time.Second, "the store to reach Redis", func() bool {
		return g.Ping(context.Background()) == nil
	})

	const quota = 10
	c := sluice.Check{Key: "crash-lost", Limit: sluice.FixedWindow(quota, time.Hour), Cost: 1}
	replicated := spendN(t, g, c, 5)
	written, err := master.Info("replication")
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the replica to hold the first units", func() bool {
		info, err := replica.Info("replication")
		return err == nil && replOffset(info) >= replOffset(written)
	})
	time.Sleep(400 * time.Millisecond) // the watch reads the master's offset

	link.SetLatency(time.Hour) // the replica receives nothing more
	five := c
	five.Cost = 5
	unreplicated := 5 * spendN(t, g, five, 1) // acknowledged by the master only
	master.Kill()                             // a crash
	link.ResetAll()
	link.RefuseNew(true)

	waitUntil(t, 30*time.Second, "the replica to be promoted", func() bool {
		info, err := replica.Info("replication")
		return err == nil && info["role"] == "master"
	})
	after := 0
	for end := time.Now().Add(10 * time.Second); after < quota && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		after += spendN(t, g, c, 1)
	}
	time.Sleep(500 * time.Millisecond) // several watch reads of the new master
	total := replicated + unreplicated + after
	t.Logf("admitted %d replicated and %d unreplicated before the crash, %d after the promotion (limit %d per hour); losses %+v",
		replicated, unreplicated, after, quota, g.Losses())
	if after == 0 {
		t.Fatalf("nothing admitted in 10 s after the promotion: the store did not decide on the new master; log:\n%s", logs.String())
	}
	if total > quota+unreplicated || after > quota-replicated {
		t.Errorf("admitted %d in one window of a limit of %d (%d after the promotion), beyond the %d the new master never received; log:\n%s",
			total, quota, after, unreplicated, logs.String())
	}
}

// replOffset is the replication offset INFO replication reports.
func replOffset(info map[string]string) int64 {
	n, _ := strconv.ParseInt(info["master_repl_offset"], 10, 64)
	return n
}
