package reliability_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/reliability"
	"github.com/sluice-dev/sluice/redis"
)

// A TCP proxy between sluice and Redis adds latency and breaks connections
// while 64 clients decide (policy local, two instances):
//
//   - 15 ms each way (a 30 ms round trip, under the store's timeout,
//     storeTimeout): Redis still decides; it only takes longer.
//   - 200 ms each way: every call times out and falls back; taking the
//     latency away brings Redis back.
//   - every open connection reset once: the calls on them fall back, the
//     client reconnects, Redis decides again.
//   - new connections refused and open ones reset for 700 ms (Redis
//     unreachable), then accepted again: fallback, then recovery.
//
// No error, no leak, every decision Redis's or the local share's, counters
// equal what the clients saw.
func TestLatencyAndResetsBetweenSluiceAndRedis(t *testing.T) {
	srv := redistest.Standalone(t)
	leaks := leakCheck(t)
	proxy, err := faultproxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	s := newStack(t, redis.Options{Addrs: []string{proxy.Addr()}}, failover.Local, 2)
	load := reliability.Start(s.lim, clients, perClient, classify(failover.Local, 2))
	defer func() {
		if leaks == nil {
			return
		}
		load.Stop()
		s.close()
		proxy.Close()
	}()
	time.Sleep(300 * time.Millisecond)
	t.Logf("direct: %s", summary(load.Phase(nil)))

	// Slower, still under the timeout.
	load.Mark()
	proxy.SetLatency(15 * time.Millisecond)
	time.Sleep(700 * time.Millisecond)
	slow := load.Phase(nil)
	t.Logf("+15 ms each way: %s", summary(slow))
	if slow.Primary == 0 {
		t.Error("Redis decided nothing with a 30 ms round trip")
	}

	// Slower than the timeout, then fast again.
	load.Mark()
	proxy.SetLatency(200 * time.Millisecond)
	time.Sleep(700 * time.Millisecond)
	t.Logf("+200 ms each way: %s", summary(load.Phase(nil)))
	recovery(t, load, "latency removed", func() { proxy.SetLatency(0) })

	// Every connection reset once.
	time.Sleep(300 * time.Millisecond)
	load.Mark()
	n := proxy.ResetAll()
	if _, err := load.WaitFor(2*recoveryBound, "Redis deciding after the reset", func(p reliability.Phase) bool {
		return p.FirstPrimary >= 0
	}); err != nil {
		t.Fatal(err)
	}
	p := settle(t, load, 5*time.Second)
	t.Logf("%d connections reset: %s; last fallback %s after the reset", n, summary(p), ms(p.LastFallback))

	// Unreachable for 700 ms, then reachable again.
	load.Mark()
	proxy.RefuseNew(true)
	proxy.ResetAll()
	time.Sleep(700 * time.Millisecond)
	t.Logf("unreachable: %s", summary(load.Phase(nil)))
	recovery(t, load, "connections accepted again", func() { proxy.RefuseNew(false) })

	seen := load.Stop()
	s.close()
	proxy.Close()
	leaks()
	leaks = nil
	checkCounters(t, s, seen, 0)
	t.Logf("proxy: %+v", proxy.Stats())
}

// recovery applies repair and reports how long until Redis decides again
// (first decision) and until no client falls back any more; it fails the
// test beyond recoveryBound.
func recovery(t *testing.T, load *reliability.Load, what string, repair func()) {
	t.Helper()
	load.Mark()
	repair()
	if _, err := load.WaitFor(2*recoveryBound, "recovery after "+what, func(p reliability.Phase) bool {
		return p.FirstPrimary >= 0
	}); err != nil {
		t.Fatal(err)
	}
	p := settle(t, load, 5*time.Second)
	t.Logf("%s: first decision from Redis after %s, last fallback after %s", what, ms(p.FirstPrimary), ms(p.LastFallback))
	if p.FirstPrimary > recoveryBound {
		t.Errorf("%s: Redis decided again only after %v, want ≤ %v", what, p.FirstPrimary, recoveryBound)
	}
}

func summary(p reliability.Phase) string {
	return "calls " + itoa(p.Calls) + " (" + itoa(p.Primary) + " Redis, " + itoa(p.Fallback) + " fallback), p50 " +
		p.P50.Round(time.Microsecond).String() + ", p99 " + p.P99.Round(time.Microsecond).String()
}
