package switchover_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/reliability"
	"github.com/sluice-dev/sluice/redis"
)

// The promise under test: 100 per aligned second, two instances, so each
// decides at most 50 a second on its own.
const (
	quantity  = 100
	instances = 2
	share     = quantity / instances
)

var perSecond = sluice.FixedWindow(quantity, time.Second)

// pace is each client's pause between calls: one client per key and
// instance asks 200 times a second, four times its share.
const pace = 5 * time.Millisecond

// instancesOf opens the instances' stores as `sluice serve` does (Open:
// on_store_error local, two instances, 50 ms timeout), each closed when the
// test ends, and returns them with their shared log.
func instancesOf(t *testing.T, o redis.Options) ([]*redis.Guarded, []sluice.Store, *realtest.Buffer) {
	t.Helper()
	logs := &realtest.Buffer{}
	o.Instances = instances
	o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var gs []*redis.Guarded
	var stores []sluice.Store
	for range instances {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		g, err := redis.Open(ctx, o, redis.WithBatching(redis.DefaultBatchRuns))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		gs = append(gs, g)
		stores = append(stores, g)
	}
	return gs, stores, logs
}

// keys returns n client keys.
func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("client-%d", i)
	}
	return out
}

// judge logs what the clients saw around a fault at fault and fails the
// test on an error or on a window beyond bound.
func judge(t *testing.T, seen *reliability.Seen, fault time.Time, bound int64, keys ...string) {
	t.Helper()
	key, worst := seen.Worst(time.Time{}, time.Time{}, keys...)
	_, before := seen.Worst(time.Time{}, fault.Add(-time.Second), keys...)
	t.Logf("%d calls, %d errors; slowest %v; worst window before the fault %d; worst window %d (%s at %+d ms, %d local); promise %d, bound %d",
		seen.Calls, seen.Errors, seen.Slowest.Round(time.Millisecond), before.Admitted, worst.Admitted, key,
		worst.Start.Sub(fault).Milliseconds(), worst.Local, seen.Promise, bound)
	t.Logf("windows from 1 s before the fault (ms after it):%s", seen.Table(fault))
	if seen.Errors != 0 {
		t.Errorf("%d calls failed (%s): a failover of Redis reached the clients", seen.Errors, strings.Join(seen.Errs, "; "))
	}
	if worst.Admitted > bound {
		t.Errorf("%s admitted %d units in the second from %+d ms after the fault: more than %d", key, worst.Admitted,
			worst.Start.Sub(fault).Milliseconds(), bound)
	}
}

// writesReach waits up to timeout until the fleet's decisions change srv's
// state (the witness count of client moves), then long enough for the
// stores' watch to have read srv's history.
func writesReach(srv *redistest.Server, client string, timeout time.Duration) error {
	key := redis.Key(client, "witness")
	deadline := time.Now().Add(timeout)
	for last := any(nil); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		v, err := srv.Do("GET", key)
		if err == nil && v != nil && last != nil && v != last {
			time.Sleep(3 * watchEvery)
			return nil
		}
		last = v
	}
	return fmt.Errorf("no decision reached %s within %v", srv.Addr, timeout)
}

// watchEvery is how often the stores read their deployment (redis's
// watchEvery).
const watchEvery = 100 * time.Millisecond
