package redis_test

import (
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// The Redis store decides every conformance scenario exactly as
// sluice.DecideBatch does, on a standalone server and on a Cluster (where
// calls that span subjects span slots), at the suite's clock.
func TestConformance(t *testing.T) {
	t.Run("standalone", func(t *testing.T) {
		client := redistest.Standalone(t).Client(t)
		conformance.Run(t, func(t *testing.T, clock *conformance.Clock) sluice.Store {
			return redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))
		})
	})
	t.Run("cluster", func(t *testing.T) {
		client := redistest.Cluster(t).Client(t)
		conformance.Run(t, func(t *testing.T, clock *conformance.Clock) sluice.Store {
			return redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))
		})
	})
}
