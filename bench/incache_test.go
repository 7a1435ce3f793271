package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// BenchmarkInCache decides for one key again and again on one goroutine,
// under limits so high that every request is admitted: the work of an
// admitted decision with every line it reads in the first-level cache,
// which BenchmarkAllow adds its cache misses to. Run it with -cpu 1.
//
// sluice-limiter is what BenchmarkAllow's sluice-gcra row runs
// (Limiter.Allow on the memory store, GCRA); sluice-plan3 is Limiter.Allow
// on a plan of three limits of one key (per second, minute and hour);
// sluice-store is the store's part of sluice-limiter alone (Store.Apply).
// scripts/instructions counts each row's instructions per decision.
func BenchmarkInCache(b *testing.B) {
	key := benchKeys[7]
	ctx := context.Background()
	// BenchmarkAllow's rate with a burst of 2^40: never refuses here.
	never := sluice.GCRA(Rate, time.Second).WithBurst(sluice.MaxQuantity)
	b.Run("sluice-limiter", func(b *testing.B) {
		st := memory.New(memory.WithSweepInterval(0))
		defer st.Close()
		lim := sluice.NewLimiter(st)
		var d sluice.Decision
		checks := []sluice.Check{{Key: key, Limit: never, Cost: 1}}
		inCache(b, func() bool {
			if err := lim.Allow(ctx, checks, &d); err != nil {
				b.Fatal(err)
			}
			return d.Allowed
		})
	})
	b.Run("sluice-plan3", func(b *testing.B) {
		st := memory.New(memory.WithSweepInterval(0))
		defer st.Close()
		lim := sluice.NewLimiter(st)
		var d sluice.Decision
		checks := []sluice.Check{
			{Key: key, Limit: sluice.GCRA(Rate, time.Second).WithBurst(sluice.MaxQuantity), Cost: 1},
			{Key: key, Limit: sluice.GCRA(60*Rate, time.Minute).WithBurst(sluice.MaxQuantity), Cost: 1},
			{Key: key, Limit: sluice.GCRA(3600*Rate, time.Hour).WithBurst(sluice.MaxQuantity), Cost: 1},
		}
		inCache(b, func() bool {
			if err := lim.Allow(ctx, checks, &d); err != nil {
				b.Fatal(err)
			}
			return d.Allowed
		})
	})
	b.Run("sluice-store", func(b *testing.B) {
		st := memory.New(memory.WithSweepInterval(0))
		defer st.Close()
		checks := []sluice.Check{{Key: key, Limit: never, Cost: 1}}
		out := make([]sluice.Status, 1)
		inCache(b, func() bool {
			if err := st.Apply(ctx, checks, out); err != nil {
				b.Fatal(err)
			}
			return out[0].Allowed
		})
	})
	b.Run("sethvargo", func(b *testing.B) {
		// Its bucket starts full and refills only at the end of each
		// interval, by interval/Tokens tokens per interval elapsed: a huge
		// burst never refills (nor needs to) within a benchmark.
		st, err := memorystore.New(&memorystore.Config{Tokens: 1 << 40, Interval: 1000 * time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close(ctx)
		inCache(b, func() bool {
			_, _, _, ok, err := st.Take(ctx, key)
			if err != nil {
				b.Fatal(err)
			}
			return ok
		})
	})
	b.Run("floor", func(b *testing.B) {
		t := newFloorTable([]string{key})
		defer t.clock.close()
		neverRefuse(&t.interval, &t.burst)
		inCache(b, func() bool { return t.allow(key) })
	})
	b.Run("floor-locked", func(b *testing.B) {
		t := newLockedFloorTable([]string{key})
		defer t.clock.close()
		neverRefuse(&t.interval, &t.burst)
		inCache(b, func() bool { return t.allow(key) })
	})
}

// inCache runs allow b.N times and fails b if it ever refuses.
func inCache(b *testing.B, allow func() bool) {
	allow()
	b.ReportAllocs()
	for b.Loop() {
		if !allow() {
			b.Fatal("refused: the limit is meant to admit everything")
		}
	}
}

// BenchmarkFloorWork is floor-locked with rounds of extra arithmetic after
// each decision (about 4 instructions a round, none of it waiting for
// memory), over BenchmarkAllow's 65,536 keys and, as work-N-hot, on one key
// in cache. It shows what a decision's length costs beyond its own
// execution time: a short decision lets the processor start the next
// decision's cache misses while it waits for this one's; past some length
// it cannot, and each decision then waits for its misses in full. Compare
// work-N with work-N-hot, at -cpu 1 and 2.
func BenchmarkFloorWork(b *testing.B) {
	for _, n := range []int{0, 5, 10, 15, 20, 25, 50, 100} {
		b.Run(fmt.Sprintf("work-%d", n), func(b *testing.B) {
			t := newLockedFloorTable(benchKeys)
			defer t.clock.close()
			runFloor(b, withWork(t.allow, n))
		})
		b.Run(fmt.Sprintf("work-%d-hot", n), func(b *testing.B) {
			key := benchKeys[0]
			t := newLockedFloorTable([]string{key})
			defer t.clock.close()
			neverRefuse(&t.interval, &t.burst)
			allow := withWork(t.allow, n)
			b.ReportAllocs()
			for b.Loop() {
				allow(key)
			}
		})
	}
}

// workSink keeps withWork's arithmetic from being optimized away.
var workSink atomic.Uint64

// withWork returns allow followed by n rounds of arithmetic.
func withWork(allow func(string) bool, n int) func(string) bool {
	return func(key string) bool {
		ok := allow(key)
		var acc [4]uint64
		for j := range n {
			acc[j&3] += uint64(j) * 0x9e3779b97f4a7c15
		}
		if x := acc[0] ^ acc[1] ^ acc[2] ^ acc[3]; x == 1 { // never: a store only the compiler cannot rule out
			workSink.Store(x)
		}
		return ok
	}
}
