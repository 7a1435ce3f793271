package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// A latencyHistogram counts durations in log-linear buckets, as
// HdrHistogram does: one bucket per nanosecond below 256 ns, and above that
// 128 buckets to each power of two, each 1/128 as wide as the power of two
// it lies in. It takes a fixed 58 KiB, whatever it counts.
//
// Percentile reports the midpoint of the bucket holding the exact
// percentile, which is within latencyRelativeError of it; Max is exact.
//
// The zero value is not usable: make one with newLatencyHistogram. Record
// and the readers may be called concurrently; a read concurrent with
// Record sees some of the values being recorded.
type latencyHistogram struct {
	counts [latencyBuckets]atomic.Int64
	count  atomic.Int64
	max    atomic.Int64
}

const (
	// latencySubBits is log2 of the buckets to a power of two.
	latencySubBits = 7
	latencySub     = 1 << latencySubBits
	// latencyBuckets covers 0 to math.MaxInt64: 2·latencySub exact
	// buckets for 0–255, then latencySub for each power of two from 2^8
	// to 2^62.
	latencyBuckets = 2*latencySub + (62-latencySubBits)*latencySub

	// latencyRelativeError bounds |reported - exact| / exact for
	// Percentile: half a bucket's width over its lower bound, 1/256
	// (0.39%).
	latencyRelativeError = 1.0 / (2 * latencySub)
)

func newLatencyHistogram() *latencyHistogram { return &latencyHistogram{} }

// latencyBucket returns the index of the bucket holding v ≥ 0.
func latencyBucket(v int64) int {
	if v < 2*latencySub {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 1        // v's highest bit, 8 to 62
	top := int(v >> (e - latencySubBits)) // latencySub to 2·latencySub-1
	return (e-latencySubBits)*latencySub + top
}

// latencyBucketBounds returns the lowest value of bucket i and its width.
func latencyBucketBounds(i int) (low, width int64) {
	if i < 2*latencySub {
		return int64(i), 1
	}
	e := i/latencySub + latencySubBits - 1
	top := int64(i%latencySub + latencySub)
	shift := e - latencySubBits
	return top << shift, 1 << shift
}

// Record counts d; a negative d (a clock stepped back) counts as 0.
func (h *latencyHistogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[latencyBucket(v)].Add(1)
	h.count.Add(1)
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

// Count returns how many durations were recorded.
func (h *latencyHistogram) Count() int64 { return h.count.Load() }

// Max returns the longest duration recorded, exactly; 0 if none was.
func (h *latencyHistogram) Max() time.Duration { return time.Duration(h.max.Load()) }

// Percentile returns the p-th percentile (0 < p ≤ 100) of the recorded
// durations by nearest rank (the value of rank n·p/100 rounded, at least
// 1), within latencyRelativeError of the exact one and never above Max; 0
// if none was recorded.
func (h *latencyHistogram) Percentile(p float64) time.Duration {
	n := h.count.Load()
	if n == 0 {
		return 0
	}
	rank := min(max(int64(float64(n)*p/100+0.5), 1), n)
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			low, width := latencyBucketBounds(i)
			mid := low + width/2
			if width == 1 {
				mid = low
			}
			return time.Duration(min(mid, h.max.Load()))
		}
	}
	return time.Duration(h.max.Load()) // counts still being recorded
}
