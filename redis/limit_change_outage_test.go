package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A reload that raises a limit (same name, so the same state in Redis and
// the same account in the failover) while Redis cannot be reached: the
// fallback starts the key from what Redis last said, read under the raised
// limit — what was used of the old one is used of the new — not from a
// whole share. One instance, 10 of 10 an hour counted by Redis, raised to
// 12 an hour: the fallback admits the 2 left (it admitted 12: 22 in one
// window of a limit of 12, where one instance alone is bounded by Q).
func TestARaisedLimitDuringAnOutageStartsFromRedisLastWord(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy, err := faultproxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	g, err := redis.Open(context.Background(), redis.Options{
		Addrs: []string{proxy.Addr()}, Timeout: testTimeout, Instances: 1,
	}, redis.WithBatching(0))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c := sluice.Check{Key: "raised-in-outage", Limit: sluice.FixedWindow(10, time.Hour).Named("per-hour"), Cost: 1}
	if n := admitUntilRefused(t, g, c, 10); n != 10 {
		t.Fatalf("Redis admitted %d of 10", n)
	}
	proxy.RefuseNew(true)
	proxy.ResetAll()
	c.Limit = sluice.FixedWindow(12, time.Hour).Named("per-hour") // the reload
	if n := admitUntilRefused(t, g, c, 30); n != 2 {
		t.Errorf("with Redis unreachable the fallback admitted %d under the raised limit of 12, want the 2 left", n)
	}
}
