package main

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"time"
)

// histogramTestValues returns n durations from 0 to about 100 s, spread
// over every order of magnitude (log-uniform, with a tenth below 300 ns
// for the exact buckets and the first of the others), the same for every
// call with the same seed.
func histogramTestValues(n int, seed uint64) []time.Duration {
	out := make([]time.Duration, n)
	x := seed | 1
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		u := float64(x>>11) / (1 << 53) // [0, 1)
		if i%10 == 0 {
			out[i] = time.Duration(x % 300)
		} else {
			out[i] = time.Duration(math.Pow(10, 2+9*u)) // 100 ns to 100 s
		}
	}
	return out
}

// exactPercentile is the nearest-rank percentile of sorted: the value of
// rank n·p/100 rounded, at least 1.
func exactPercentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// The latencies bench keeps take a fixed amount of memory however many
// requests a run sends: 10 million recorded values retain under 4 MiB
// (58 KiB, with room for what other goroutines of the test binary hold).
func TestBenchLatencyMemoryIsBounded(t *testing.T) {
	const n = 10_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h := newLatencyHistogram()
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		h.Record(time.Duration(x % uint64(100*time.Second)))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(h)
	if h.Count() != n {
		t.Fatalf("counted %d of the %d recorded", h.Count(), n)
	}
	t.Logf("%d values recorded: %d bytes retained (%.4f bytes a value)", n, retained, float64(retained)/n)
	if retained > 4<<20 {
		t.Errorf("%d values recorded retain %d bytes (%.2f bytes a value), want a bound under 4 MiB whatever the count", n, retained, float64(retained)/n)
	}
}

// The percentiles bench prints are within latencyRelativeError (under 1%)
// of the exact nearest-rank percentiles of what it recorded, and its max
// is the exact max.
func TestBenchLatencyPercentilesAreWithinTheStatedError(t *testing.T) {
	if latencyRelativeError > 0.01 {
		t.Fatalf("latencyRelativeError %v: the stated bound is above 1%%", latencyRelativeError)
	}
	for _, set := range []struct {
		name   string
		values []time.Duration
	}{
		{"spread", histogramTestValues(200_000, 1)},
		{"one value", []time.Duration{3_141_592}},
		{"bucket edges", []time.Duration{0, 1, 255, 256, 257, 511, 512, 513, 1<<20 - 1, 1 << 20, 1<<20 + 1, math.MaxInt64 - 1, math.MaxInt64}},
		{"negative", []time.Duration{-5, 1000, 2000}},
	} {
		h := newLatencyHistogram()
		for _, v := range set.values {
			h.Record(v)
		}
		sorted := slices.Clone(set.values)
		for i, v := range sorted {
			sorted[i] = max(v, 0) // a negative duration (a clock stepped back) counts as 0
		}
		slices.Sort(sorted)
		ps := []float64{50, 90, 99}
		for p := 0.1; p <= 100; p += 0.1 {
			ps = append(ps, p)
		}
		for _, p := range ps {
			exact, got := exactPercentile(sorted, p), h.Percentile(p)
			if diff := math.Abs(float64(got) - float64(exact)); diff > latencyRelativeError*float64(exact) {
				t.Errorf("%s: p%g %v, exact %v: off by %.3f%%, want at most %.3f%%", set.name, p, got, exact, 100*diff/float64(exact), 100*latencyRelativeError)
			}
		}
		if got, want := h.Max(), sorted[len(sorted)-1]; got != want {
			t.Errorf("%s: max %v, want %v exactly", set.name, got, want)
		}
		if h.Count() != int64(len(set.values)) {
			t.Errorf("%s: count %d, want %d", set.name, h.Count(), len(set.values))
		}
	}
}

// The buckets tile 0 to math.MaxInt64 without gap or overlap, each at
// most 1/128 as wide as its lowest value once wider than 1 ns.
func TestBenchLatencyBucketsTileTheDurations(t *testing.T) {
	var next int64
	for i := range latencyBuckets {
		low, width := latencyBucketBounds(i)
		if low != next {
			t.Fatalf("bucket %d starts at %d, want %d", i, low, next)
		}
		high := low + (width - 1)
		if latencyBucket(low) != i || latencyBucket(high) != i {
			t.Fatalf("bucket %d holds %d to %d, but they are put in %d and %d", i, low, high, latencyBucket(low), latencyBucket(high))
		}
		if width > 1 && width*latencySub > low {
			t.Fatalf("bucket %d: %d wide from %d, over 1/%d", i, width, low, latencySub)
		}
		next = high + 1
	}
	if next != math.MinInt64 { // past math.MaxInt64
		t.Fatalf("the buckets end at %d, want math.MaxInt64", next-1)
	}
}
