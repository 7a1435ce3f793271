package degrade_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// p99Of returns the P99 a Monitor samples of a window of answers of the
// given latencies, answered in that order.
func p99Of(t *testing.T, latencies func(yield func(time.Duration) bool)) degrade.Signals {
	t.Helper()
	var now time.Time
	m := degrade.NewMonitorWith(degrade.MonitorConfig{Clock: func() time.Time { return now }})
	m.Sample() // start a window
	base := time.Unix(0, 0)
	for d := range latencies {
		now = base
		end := m.Begin()
		now = base.Add(d)
		end(200)
	}
	return m.Sample()
}

// Up to 4096 answers a window, P99 is the nearest rank of every latency:
// the ⌈0.99·n⌉-th smallest, whatever order they came in.
func TestP99IsTheNearestRankOfUpTo4096Answers(t *testing.T) {
	for _, n := range []int{1, 100, 101, 1000, 4096} {
		order := rand.New(rand.NewPCG(1, uint64(n))).Perm(n)
		s := p99Of(t, func(yield func(time.Duration) bool) {
			for _, i := range order {
				if !yield(time.Duration(i+1) * time.Microsecond) {
					return
				}
			}
		})
		want := time.Duration((n*99+99)/100) * time.Microsecond
		if s.Answers != int64(n) || s.P99 != want {
			t.Errorf("%d answers of 1µs…%dµs: %d answers, P99 %v, want %v", n, n, s.Answers, s.P99, want)
		}
	}
}

// Beyond 4096 answers a window, P99 is the nearest rank of a uniform
// random sample of 4096 of them: the 4056th smallest of the sample. Of
// 200,000 answers of latencies 1µs…200ms it lies between the window's
// 97.5th and 99.7th percentiles (195ms and 199.4ms) but for a chance below
// 1e-10 a run: the sample holds at least 4056 of the answers below the
// 97.5th with a probability of about 1e-12, and fewer than 4056 of those up
// to the 99.7th with one of about 8e-11 (binomial tails of 4096 draws,
// which bound the sample's, drawn without replacement).
func TestP99OfMoreThan4096AnswersIsASamplesNearestRank(t *testing.T) {
	const n = 200_000
	s := p99Of(t, func(yield func(time.Duration) bool) {
		for i := 1; i <= n; i++ {
			if !yield(time.Duration(i) * time.Microsecond) {
				return
			}
		}
	})
	lo, hi := time.Duration(n*975/1000)*time.Microsecond, time.Duration(n*997/1000)*time.Microsecond
	if s.Answers != n || s.P99 < lo || s.P99 > hi {
		t.Errorf("%d answers of 1µs…%v: %d answers, P99 %v, want within [%v, %v] (the exact p99: %v)",
			n, time.Duration(n)*time.Microsecond, s.Answers, s.P99, lo, hi, time.Duration(n*99/100)*time.Microsecond)
	}
}
