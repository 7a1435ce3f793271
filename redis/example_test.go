package redis_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/redis"
)

// One call gives a service the store `sluice serve` runs: limits shared
// through Redis, a refused client kept off Redis by the over-limit cache,
// and every call Redis cannot decide within 50 ms decided locally on this
// instance's share of the limit (a quarter, for four instances).
func ExampleOpen() {
	ctx := context.Background()
	store, err := redis.Open(ctx, redis.Options{
		Mode:         redis.ModeCluster, // or ModeStandalone (the default), ModeSentinel with MasterSet
		Addrs:        []string{"redis-1:6379", "redis-2:6379", "redis-3:6379"},
		Password:     os.Getenv("REDIS_PASSWORD"),
		OnStoreError: failover.Local, // or failover.Allow, failover.Deny
		Instances:    4,              // failover.Local decides on a quarter of each limit
		Logger:       slog.Default(),
	})
	if err != nil {
		log.Fatal(err) // options that can never work; a Redis that is down is not an error
	}
	defer store.Close()
	limiter := sluice.NewLimiter(store)

	checks := []sluice.Check{{Key: "user:42", Limit: sluice.TokenBucket(5, time.Second), Cost: 1}}
	var d sluice.Decision
	if err := limiter.Allow(ctx, checks, &d); err != nil {
		log.Print(err) // the caller gave up, or an invalid check: never Redis's failure
	}
}

// Open does not need Redis to be there. Nothing listens at this address, so
// every decision follows OnStoreError (here the local fallback, with the
// whole limit for a single instance) while the store keeps trying to connect
// in the background; it decides on Redis from the first call after Redis
// answers, without a restart.
func ExampleOpen_withoutRedis() {
	ctx := context.Background()
	store, err := redis.Open(ctx, redis.Options{Addrs: []string{"127.0.0.1:1"}})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	fmt.Println("store unavailable:", errors.Is(store.Ping(ctx), sluice.ErrStoreUnavailable))

	limiter := sluice.NewLimiter(store)
	checks := []sluice.Check{{Key: "user:42", Limit: sluice.PerMinute(2), Cost: 1}}
	var d sluice.Decision
	for range 3 {
		if err := limiter.Allow(ctx, checks, &d); err != nil {
			log.Fatal(err)
		}
		fmt.Println("allowed:", d.Allowed)
	}
	fmt.Println("decided by on_store_error:", store.Failover().Stats().FallbackDecisions)
	// Output:
	// store unavailable: true
	// allowed: true
	// allowed: true
	// allowed: false
	// decided by on_store_error: 3
}
