package memory_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// Any shard count and key bound make a store that decides: counts below
// one mean one, and counts past what an int can round up to a power of
// two are not a panic.
func TestAnyShardCountMakesAStore(t *testing.T) {
	for _, c := range []struct{ shards, maxKeys int }{
		{0, 1}, {-5, 1}, {1, 1}, {3, 2}, {math.MaxInt, 1 << 20}, {1<<62 + 1, 1 << 20}, {math.MaxInt, math.MaxInt},
	} {
		s := memory.New(memory.WithShards(c.shards), memory.WithMaxKeys(c.maxKeys), memory.WithSweepInterval(0))
		out := make([]sluice.Status, 1)
		checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1, time.Minute), Cost: 1}}
		if err := s.Apply(context.Background(), checks, out); err != nil || !out[0].Allowed {
			t.Errorf("WithShards(%d), WithMaxKeys(%d): %+v, %v", c.shards, c.maxKeys, out[0], err)
		}
		s.Close()
	}
}
