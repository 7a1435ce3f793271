package degrade

import (
	"math"
	"testing"
	"time"
)

// histP99 reads the bucket that holds the 99th percentile's rank: its upper
// boundary, or its lower one when the upper is +Inf (the runtime's last
// bucket), never a negative or wrapped Duration.
func TestHistP99(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-3, 1, 1e12, math.Inf(1)}
	cases := []struct {
		name   string
		counts []uint64
		want   time.Duration
	}{
		{"nothing added", []uint64{0, 0, 0, 0, 0}, 0},
		{"all in the first bucket", []uint64{100, 0, 0, 0, 0}, time.Microsecond},
		{"one slow in a hundred is not the p99", []uint64{0, 99, 1, 0, 0}, time.Millisecond},
		{"two slow in a hundred are", []uint64{0, 98, 2, 0, 0}, time.Second},
		{"beyond Duration's range saturates", []uint64{0, 0, 0, 100, 0}, math.MaxInt64},
		{"the +Inf bucket reads its lower boundary", []uint64{0, 0, 0, 0, 100}, math.MaxInt64},
	}
	for _, c := range cases {
		prev := make([]uint64, len(c.counts))
		if got := histP99(prev, c.counts, buckets); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Since prev: only what was added counts.
	if got := histP99([]uint64{0, 0, 0, 50, 0}, []uint64{100, 0, 0, 50, 0}, buckets); got != time.Microsecond {
		t.Errorf("since prev: %v, want 1µs", got)
	}
}

// Of fewer than 100 scheduling events, the p99 is the slowest: in a window
// where the process was nearly idle, one goroutine that waited (a
// throttled cgroup period, a long GC assist) was the scheduler's p99 and
// entered a level. Such a window reads 0, as request latency's p99 counts
// only from 100 answers.
func TestHistP99OfFewEventsIsNone(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-3, 1, math.Inf(1)}
	for _, c := range []struct {
		name   string
		counts []uint64
		want   time.Duration
	}{
		{"one slow event alone", []uint64{0, 0, 1, 0}, 0},
		{"one slow event of 99", []uint64{98, 0, 1, 0}, 0},
		{"two slow of 100", []uint64{98, 0, 2, 0}, time.Second},
	} {
		if got := histP99(make([]uint64, len(c.counts)), c.counts, buckets); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
