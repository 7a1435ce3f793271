package redis_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// BenchmarkApply measures decisions per second against a local Redis, many
// goroutines sharing one client (rueidis pipelines them): one GCRA check,
// and a per-second + per-minute + per-day check of one subject.
func BenchmarkApply(b *testing.B) {
	srv := redistest.Standalone(b)
	store := redis.New(srv.Client(b), redis.WithTimeout(testTimeout))
	cases := map[string][]sluice.Check{
		"one-check": {{Limit: sluice.PerSecond(1_000_000), Cost: 1}},
		"three-limits": {
			{Limit: sluice.PerSecond(1_000_000), Cost: 1},
			{Limit: sluice.FixedWindow(1_000_000_000, time.Minute).Named("per-minute"), Cost: 1},
			{Limit: sluice.SlidingCounter(1_000_000_000, 24*time.Hour).Named("per-day"), Cost: 1},
		},
	}
	for name, tmpl := range cases {
		b.Run(name, func(b *testing.B) {
			var n atomic.Int64
			srv.Do("CONFIG", "RESETSTAT")
			b.SetParallelism(16)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				checks := append([]sluice.Check(nil), tmpl...)
				key := "bench-" + strconv.FormatInt(n.Add(1)%64, 10)
				for i := range checks {
					checks[i].Key = key
				}
				out := make([]sluice.Status, len(checks))
				for pb.Next() {
					if err := store.Apply(context.Background(), checks, out); err != nil {
						b.Fatal(err)
					}
				}
			})
			if info, err := srv.Info("commandstats"); err == nil {
				b.Logf("time in Redis: %s", info["cmdstat_evalsha"])
			}
		})
	}
}

// BenchmarkReplicas measures what WithReplicas costs: decisions per second
// of one GCRA check, 16 goroutines sharing one client, against a master
// with one replica, without and with a WAIT for it after every script run.
func BenchmarkReplicas(b *testing.B) {
	master, replica := redistest.Standalone(b), redistest.Standalone(b)
	replica.MustDo("REPLICAOF", "127.0.0.1", strconv.Itoa(master.Port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if info, err := replica.Info("replication"); err == nil && info["master_link_status"] == "up" {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the replica did not sync")
		}
	}
	for _, tc := range []struct {
		name string
		opts []redis.Option
	}{{"async", nil}, {"wait-1-replica", []redis.Option{redis.WithReplicas(1, 0)}}} {
		b.Run(tc.name, func(b *testing.B) {
			store := redis.New(master.Client(b), append([]redis.Option{redis.WithTimeout(testTimeout)}, tc.opts...)...)
			var n atomic.Int64
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				checks := []sluice.Check{{Key: "bench-" + strconv.FormatInt(n.Add(1)%64, 10), Limit: sluice.PerSecond(1_000_000), Cost: 1}}
				out := make([]sluice.Status, 1)
				for pb.Next() {
					if err := store.Apply(context.Background(), checks, out); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}
