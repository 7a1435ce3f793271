package memory_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A shard's entries are all as wide as its widest key needs, so a flood of
// keys of one state each (examples/sluice.yaml's anonymous plan, a sliding
// counter) beside clients of a plan costs the plan's entry width per key:
// about 260 bytes a unit beside a plan of four slots (the example's free
// plan: a token bucket, a sliding counter and a fixed window), about 360
// beside one of six (three sliding counters), where keys of one limit
// alone cost about 90. WithMaxKeys, the package doc and docs/operations.md
// state 400 bytes a unit as the bound whatever the keys; the test allows a
// fifth above it, as TestHeapPerClient does above its table.
func TestAKeyFloodBesideAPlanStaysWithinTheBytesAUnitStated(t *testing.T) {
	if raceEnabled {
		t.Skip("heap measured without the race detector")
	}
	const n, stated = 1 << 16, 400
	anonymous := sluice.SlidingCounter(20, time.Minute).Named("per-minute")
	for _, tc := range []struct {
		name string
		plan []sluice.Limit
	}{
		{"four slots", []sluice.Limit{ // examples/sluice.yaml's free plan
			sluice.TokenBucket(5, time.Second).WithBurst(10).Named("per-second-bucket"),
			sluice.SlidingCounter(30, time.Minute).Named("per-minute"),
			sluice.FixedWindow(1000, 24*time.Hour).Named("per-day"),
		}},
		{"six slots", []sluice.Limit{
			sluice.SlidingCounter(30, time.Minute).Named("per-minute"),
			sluice.SlidingCounter(600, time.Hour).Named("per-hour"),
			sluice.SlidingCounter(1000, 24*time.Hour).Named("per-day"),
		}},
	} {
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := memory.New(memory.WithSweepInterval(0), memory.WithMaxKeys(n), memory.WithClock(func() time.Time { return now }))
		lim := sluice.NewLimiter(s)
		ctx := context.Background()
		var d sluice.Decision
		// 1,500 clients of the plan (a few a shard), then a flood of
		// anonymous clients, one per address.
		checks := make([]sluice.Check, len(tc.plan))
		for i := range 1500 {
			for j, l := range tc.plan {
				checks[j] = sluice.Check{Key: fmt.Sprintf("key:%064d", i), Limit: l, Cost: 1}
			}
			if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
				t.Fatalf("%s: client %d: %v, %v", tc.name, i, d.Allowed, err)
			}
		}
		// Up to nine tenths of the bound, so that hardly any state is
		// evicted (an eviction leaves a note of its own).
		one := []sluice.Check{{Limit: anonymous, Cost: 1}}
		for i := 0; s.Stats().Units < n*9/10; {
			for range 1024 {
				one[0].Key = fmt.Sprintf("ip:10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
				i++
				if err := lim.Allow(ctx, one, &d); err != nil {
					t.Fatal(err)
				}
			}
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		st := s.Stats()
		s.Close()
		perUnit := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(st.Units)
		t.Logf("%s: %d bytes a unit; %+v", tc.name, perUnit, st)
		if perUnit > stated*6/5 {
			t.Errorf("%s: a store nine tenths full holds %d bytes a unit, more than a fifth above the %d stated", tc.name, perUnit, stated)
		}
	}
}
