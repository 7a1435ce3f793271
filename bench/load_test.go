package bench

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestPacedMeasurementOffersTheRateAskedFor holds Paced to its rate when
// the warm-up fell behind: calls that take 50 ms during the warm-up leave
// each worker hundreds of arrivals behind, which must not be made in a
// burst once the measurement begins.
func TestPacedMeasurementOffersTheRateAskedFor(t *testing.T) {
	const (
		rate   = 1000.0
		warmup = 300 * time.Millisecond
		d      = 500 * time.Millisecond
	)
	var warm atomic.Bool
	warm.Store(true)
	time.AfterFunc(warmup, func() { warm.Store(false) })
	r := Paced(2, rate, warmup, d, func(int) CallFunc {
		return func() (bool, error) {
			if warm.Load() {
				time.Sleep(50 * time.Millisecond)
			}
			return true, nil
		}
	})
	if r.Calls == 0 {
		t.Fatal("no call measured")
	}
	if got := r.Rate(); got > 1.3*rate {
		t.Fatalf("measured %.0f calls/s, offered %.0f: the warm-up's backlog was made up in a burst", got, rate)
	}
}
