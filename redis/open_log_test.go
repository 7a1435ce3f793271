package redis_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// A long outage is logged once, when the circuit opens, not again at each
// probe that finds Redis still down (one line per node every OpenFor).
func TestAnOutageIsLoggedOnce(t *testing.T) {
	srv := redistest.Standalone(t)
	srv.Kill()
	var logs realtest.Buffer
	local := memory.New(memory.WithSweepInterval(0))
	defer local.Close()
	st, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Local: local,
		Timeout: time.Second, Breaker: failover.BreakerOptions{OpenFor: 20 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lim := sluice.NewLimiter(st)
	c := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 0}
	probes := 0
	for start := time.Now(); time.Since(start) < time.Second; time.Sleep(5 * time.Millisecond) {
		if _, err := allow(lim, context.Background(), c); err != nil {
			t.Fatal(err)
		}
		probes = int(st.Failover().Stats().StoreErrors)
	}
	if probes < 5 {
		t.Fatalf("%d store errors in a second of outage: the breaker did not probe", probes)
	}
	if n := strings.Count(logs.String(), "circuit open"); n != 1 {
		t.Errorf("%d lines saying the circuit opened over %d failed calls, want 1:\n%s", n, probes, logs.String())
	}
}
