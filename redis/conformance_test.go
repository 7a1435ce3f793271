package redis_test

import (
	"context"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// The Redis store decides every conformance scenario exactly as
// sluice.DecideBatch does, on a standalone server and on a Cluster (where
// calls that span subjects span slots, and, with keys that start with "}",
// every check of a call is in a slot of its own), at the suite's clock.
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
		t.Run("a slot per check", func(t *testing.T) {
			conformance.Run(t, func(t *testing.T, clock *conformance.Clock) sluice.Store {
				return braced{redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))}
			})
		})
	})
}

// braced is a Redis store whose keys all start with "}": their hash tag is
// empty, so each state's key hashes whole, and a call's checks, also of one
// subject, fall in slots of their own.
type braced struct{ *redis.Store }

func brace(checks []sluice.Check) []sluice.Check {
	out := make([]sluice.Check, len(checks))
	for i, c := range checks {
		c.Key = "}" + c.Key
		out[i] = c
	}
	return out
}

func (b braced) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	return b.Store.Apply(ctx, brace(checks), out)
}

func (b braced) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	return b.Store.Release(ctx, brace(checks), leases)
}

func (b braced) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	return b.Store.Refund(ctx, brace(checks), charged)
}
