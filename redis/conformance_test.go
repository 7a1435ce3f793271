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
// calls that span subjects span slots, and, with each check's limit added
// to its subject, nearly every check of a call is in a slot of its own),
// at the suite's clock.
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
				return spread{redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))}
			})
		})
	})
}

// spread is a Redis store that keeps each check under its subject and its
// limit's ID together, "<subject>/<ID>": a state per (key, ID) as before,
// but the limits of one subject hash to slots of their own, so a call's
// checks, also of one subject, nearly always span slots.
type spread struct{ *redis.Store }

func spreadChecks(checks []sluice.Check) []sluice.Check {
	out := make([]sluice.Check, len(checks))
	for i, c := range checks {
		c.Key += "/" + c.Limit.ID()
		out[i] = c
	}
	return out
}

func (s spread) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	return s.Store.Apply(ctx, spreadChecks(checks), out)
}

func (s spread) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	return s.Store.Release(ctx, spreadChecks(checks), leases)
}

func (s spread) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	return s.Store.Refund(ctx, spreadChecks(checks), charged)
}
