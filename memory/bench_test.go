package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// BenchmarkAllowExistingKey is one goroutine deciding on 65,536 known keys.
func BenchmarkAllowExistingKey(b *testing.B) {
	for _, l := range []sluice.Limit{sluice.GCRA(1e6, time.Second), sluice.TokenBucket(1e6, time.Second), sluice.FixedWindow(1e9, time.Minute)} {
		b.Run(l.Algorithm().String(), func(b *testing.B) {
			s := memory.New(memory.WithSweepInterval(0))
			defer s.Close()
			lim := sluice.NewLimiter(s)
			keys := make([]string, 1<<16)
			for i := range keys {
				keys[i] = fmt.Sprintf("key-%d", i)
			}
			checks := []sluice.Check{{Limit: l, Cost: 1}}
			var d sluice.Decision
			for _, k := range keys {
				checks[0].Key = k
				lim.Allow(context.Background(), checks, &d)
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				checks[0].Key = keys[i&(1<<16-1)]
				i++
				if err := lim.Allow(context.Background(), checks, &d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAllowPlan is one goroutine deciding a plan of three limits
// (per-second and per-minute of the subject, a global per-hour) on 65,536
// known subjects.
func BenchmarkAllowPlan(b *testing.B) {
	s := memory.New(memory.WithSweepInterval(0))
	defer s.Close()
	lim := sluice.NewLimiter(s)
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	checks := []sluice.Check{
		{Limit: sluice.PerSecond(1e6), Cost: 1},
		{Limit: sluice.PerMinute(1e9), Cost: 1},
		{Key: "*", Limit: sluice.PerHour(1e12).Named("global"), Cost: 1},
	}
	var d sluice.Decision
	for _, k := range keys {
		checks[0].Key, checks[1].Key = k, k
		lim.Allow(context.Background(), checks, &d)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		k := keys[i&(1<<16-1)]
		i++
		checks[0].Key, checks[1].Key = k, k
		if err := lim.Allow(context.Background(), checks, &d); err != nil || !d.Allowed {
			b.Fatal(err, d.Allowed)
		}
	}
}

// BenchmarkAllowNewKeyFullStore is one goroutine deciding on keys never
// seen before at a full store (MaxKeys 4,096 and 65,536, as in a key
// flood): every call evicts a state, the store's clock standing still.
func BenchmarkAllowNewKeyFullStore(b *testing.B) {
	for _, maxKeys := range []int{1 << 12, 1 << 16} {
		for _, l := range []sluice.Limit{sluice.GCRA(1000, 24*time.Hour), sluice.FixedWindow(1000, 24*time.Hour), sluice.SlidingLog(1000, 24*time.Hour)} {
			b.Run(fmt.Sprintf("%s/%d", l.Algorithm(), maxKeys), func(b *testing.B) {
				at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
				s := memory.New(memory.WithSweepInterval(0), memory.WithMaxKeys(maxKeys), memory.WithClock(func() time.Time { return at }))
				defer s.Close()
				lim := sluice.NewLimiter(s)
				keys := make([]string, 1<<20)
				for i := range keys {
					keys[i] = fmt.Sprintf("key-%d", i)
				}
				checks := []sluice.Check{{Limit: l, Cost: 1}}
				var d sluice.Decision
				for _, k := range keys[:maxKeys] {
					checks[0].Key = k
					lim.Allow(context.Background(), checks, &d)
				}
				b.ReportAllocs()
				b.ResetTimer()
				i := maxKeys
				for b.Loop() {
					checks[0].Key = keys[i&(1<<20-1)]
					i++
					if err := lim.Allow(context.Background(), checks, &d); err != nil || !d.Allowed {
						b.Fatal(err, d.Allowed)
					}
				}
			})
		}
	}
}

// BenchmarkAllowSlidingLog is one goroutine deciding a sliding log of 100
// per 10 ms on 16 keys the store holds, the store's clock advancing 10 µs
// a decision: each key's log holds about 62 admissions, cut at its front
// and grown at its end as it slides (the log path, decided under the
// shard's mutex).
func BenchmarkAllowSlidingLog(b *testing.B) {
	at := sluice.MicrosSinceEpoch(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	s := memory.New(memory.WithSweepInterval(0), memory.WithClock(func() time.Time { return sluice.TimeFromMicros(at) }))
	defer s.Close()
	lim := sluice.NewLimiter(s)
	keys := make([]string, 16)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	checks := []sluice.Check{{Limit: sluice.SlidingLog(100, 10*time.Millisecond), Cost: 1}}
	var d sluice.Decision
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		checks[0].Key = keys[i&15]
		i++
		at += 10
		if err := lim.Allow(context.Background(), checks, &d); err != nil || !d.Allowed {
			b.Fatal(err, d.Allowed)
		}
	}
}
