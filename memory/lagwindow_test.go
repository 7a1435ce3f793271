package memory

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
)

// TestLaggingClockKeepsEachLimitsPromise: a client bursts at three
// instants of one aligned second (0.5 ms into it, halfway, 0.25 ms before
// its end) while the store's decisions read a time one resolution (1 ms)
// behind the exact one, as the ticker's does. Each burst sends 2Q
// requests. Whatever the algorithm, what it admits over those instants
// must stay within its promise for that span of real time plus what one
// resolution of lag may add, max(1, ⌊Burst/256⌋) units (see
// WithClockResolution):
//   - a fixed window and a sliding counter admit at most Q per aligned
//     window, and every burst is in the same one;
//   - a sliding log admits at most Q in any span of length W, and the
//     bursts are less than W apart;
//   - a GCRA bucket admits at most Burst + ⌊d·Q/W⌋ in a span of length d.
//
// A windowed limit gives its capacity back at once (a window's start, a
// log entry's expiry), so a lag that straddles such a time can admit a
// whole quota more.
func TestLaggingClockKeepsEachLimitsPromise(t *testing.T) {
	const (
		q = 100
		w = int64(time.Second / time.Microsecond)
	)
	t0 := sluice.MicrosSinceEpoch(conformance.DefaultStart)
	k := t0 - t0%w + w // an aligned second
	instants := []int64{k + 500, k + w/2, k + w - 250}
	span := instants[len(instants)-1] - instants[0]
	for _, tc := range []struct {
		limit   sluice.Limit
		promise int64
	}{
		{sluice.FixedWindow(q, time.Second), q},
		{sluice.SlidingCounter(q, time.Second), q},
		{sluice.SlidingLog(q, time.Second), q},
		{sluice.GCRA(q, time.Second), q + span*q/w},
	} {
		t.Run(tc.limit.Algorithm().String(), func(t *testing.T) {
			s := New(WithSweepInterval(0))
			defer s.Close()
			var exact fakeTime
			c := lagging(s, &exact)
			c.res = time.Millisecond
			lag := int64(c.res / time.Microsecond)
			if !c.tolerates(&tc.limit) && tc.limit.Algorithm() == sluice.AlgorithmGCRA {
				t.Fatalf("%s does not tolerate the lag: the test would not exercise it", tc.limit)
			}
			checks := []sluice.Check{{Key: "k", Limit: tc.limit, Cost: 1}}
			out := make([]sluice.Status, 1)
			var admitted int64
			for _, at := range instants {
				exact.us.Store(at)
				c.set(at - lag)
				for range 2 * q {
					if _, err := s.apply(checks, out); err != nil {
						t.Fatal(err)
					}
					if !out[0].Allowed {
						break
					}
					admitted++
				}
			}
			if bound := tc.promise + max(1, tc.limit.Burst()/lagShare); admitted > bound {
				t.Fatalf("%s admitted %d over %d µs of real time with a lag of %d µs, want at most %d (its promise, %d, plus one resolution's lag)",
					tc.limit, admitted, span, lag, bound, tc.promise)
			}
		})
	}
}
