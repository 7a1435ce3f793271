package deploy_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// storeCloseSettle is how long closing the Redis store may charge Redis
// with what the failover's local fallback admitted (redis/open.go's
// closeSettle): a SIGKILL before it ends leaves those units uncharged, and
// the fleet admits them again.
const storeCloseSettle = 5 * time.Second

// cutOffRoom is how long past shutdown.drain's deadline server.Serve waits
// for the handlers of the requests it cut off to give back what they hold
// (server/serve.go's cutOffRoom).
const cutOffRoom = time.Second

// stopNeeds is how long `sluice serve` with cfg may take to stop on
// SIGTERM: shutdown.delay; then shutdown.drain, one deadline for the
// requests in flight and, in what remains of it, notify's queue
// (server.Serve; TestShutdownDrainsRequestsAndNotifyWithinOneDrain), and
// cutOffRoom for the requests cut off at its end; then the store's close, up to storeCloseSettle on Redis (redis.Guarded.Close).
// The store's close is counted whatever cfg's store: the files deploy/
// ships are the ones an operator moves to Redis. Every stop timeout
// deploy/ and the guides set holds it.
func stopNeeds(cfg *config.Config) time.Duration {
	return cfg.Shutdown.Delay + cfg.Shutdown.Drain + cutOffRoom + storeCloseSettle
}

// TestStopTimeoutHoldsTheRedisStoreClose: docs/operations.md's 30 s stop
// timeout (--stop-timeout 30, TimeoutStopSec=30s, the pod's grace period)
// holds the default drain and a delay of up to 10 s on Redis, the store's
// close included: a SIGKILL never lands in its settle.
func TestStopTimeoutHoldsTheRedisStoreClose(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse("redis.yaml", []byte("store:\n  type: redis\n  redis: {addresses: [\"127.0.0.1:6379\"]}\nshutdown: {delay: 10s}\nplans:\n  free:\n    limits:\n      - {name: m, algorithm: fixed-window, quantity: 3, window: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	const stopTimeout = 30 * time.Second
	if need := stopNeeds(cfg); need > stopTimeout {
		t.Errorf("on Redis with a delay of %v and the default drain %v, stopping needs %v (the store's close included), over the guide's %v",
			cfg.Shutdown.Delay, cfg.Shutdown.Drain, need, stopTimeout)
	}
}
