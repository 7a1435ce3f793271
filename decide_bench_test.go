package sluice_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// BenchmarkDecide measures one admitted check of a bucket limit on a hot key,
// as a store decides it (DecideBatch with one check, state in place). Each
// step brings back exactly what the check takes (cost units refill in step
// µs), so every check is admitted with the bucket half full: the path that
// reads, spends and writes back a partly drained bucket.
//
// The rates cover the shapes of a tick: 10,000/s is 1 tick per µs (rq = 1,
// a unit is 100 ticks), 1e9/s is a unit of one tick (rw = 1, 1,000 ticks per
// µs), and 3/s has neither (rq = 3, rw = 10^6).
func BenchmarkDecide(b *testing.B) {
	rates := []struct {
		name      string
		q         int64
		burst     int64
		cost      int64
		step      int64 // µs that refill cost units
		drainedBy int64 // units taken before the loop
	}{
		{"rq=1", 10_000, 10_000, 1, 100, 5_000},
		{"rw=1", 1e9, 1e9, 1000, 1, 5e8},
		{"3-per-s", 3, 10, 3, sec, 5},
	}
	for _, alg := range []sluice.Algorithm{sluice.AlgorithmGCRA, sluice.AlgorithmTokenBucket} {
		for _, r := range rates {
			b.Run(alg.String()+"/"+r.name, func(b *testing.B) {
				l := sluice.NewLimit(alg, r.q, time.Second).WithBurst(r.burst)
				checks := []sluice.Check{{Key: "k", Limit: l, Cost: r.drainedBy}}
				states := make([]sluice.State, 1)
				out := make([]sluice.Status, 1)
				now := int64(200e12) // 2026, in µs since Epoch
				if changed, err := sluice.DecideBatch(checks, states, now, out); err != nil || !changed {
					b.Fatalf("drain refused: %+v, %v", out[0], err)
				}
				checks[0].Cost = r.cost
				for b.Loop() {
					now += r.step
					sluice.DecideBatch(checks, states, now, out)
				}
				if !out[0].Allowed || out[0].Remaining != r.burst-r.drainedBy {
					b.Fatalf("last check: %+v, want allowed with %d remaining", out[0], r.burst-r.drainedBy)
				}
			})
		}
	}
}
