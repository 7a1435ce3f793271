package sim

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// The queue's delays and the logs' state per key, held to a brute-force
// replay that shares none of Run's bookkeeping: each request decided in
// trace order on a map of states, delays summed as Decide states them, a
// log's entries counted over the trace's admissions in its window.
func TestDelaysAndStateMatchBruteForceOracles(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	for round := range 60 {
		q := 1 + rng.Int64N(8)
		w := 5 + rng.Int64N(50)
		keys := 1 + rng.IntN(4)
		tr := randomTrace(rng, keys, 1+rng.IntN(150), 10*w, q+1)
		window := time.Duration(w) * time.Microsecond
		var cs []Contender
		for _, a := range []sluice.Algorithm{sluice.AlgorithmLeakyBucket, sluice.AlgorithmGCRA, sluice.AlgorithmSlidingLog, sluice.AlgorithmConcurrency} {
			var (
				l   sluice.Limit
				err error
			)
			if a == sluice.AlgorithmConcurrency {
				l = sluice.NewLimit(a, q, window)
				err = l.Err()
			} else {
				l, err = LimitFor(a, q, window, rng.Int64N(2*q+1), time.Duration(rng.Int64N(3*w))*time.Microsecond)
			}
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, Contender{Limit: l})
		}
		res, err := Run(context.Background(), tr, Config{Quantity: q, Window: window, Contenders: cs, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for ci, c := range cs {
			states := map[int32]sluice.State{}
			var admitted, delayed, sum, most int64
			at := map[int32][]int64{} // admissions of cost > 0, by key
			peak := map[int32]int64{}
			sent := map[int32]bool{}
			for _, a := range tr.Arrivals {
				sent[a.Key] = true
				next, st, err := c.Limit.Decide(states[a.Key], a.At, a.Cost)
				if err != nil {
					t.Fatal(err)
				}
				if !st.Allowed {
					continue
				}
				states[a.Key] = next
				admitted++
				if d := st.Delay.Microseconds(); d > 0 {
					delayed++
					sum += d
					most = max(most, d)
				}
				if a.Cost > 0 {
					at[a.Key] = append(at[a.Key], a.At)
				}
				var n int64
				for _, x := range at[a.Key] {
					if x > a.At-w {
						n++
					}
				}
				peak[a.Key] = max(peak[a.Key], n)
			}
			got := res.Algorithms[ci]
			var wantMean Duration
			if admitted > 0 {
				wantMean = Duration(time.Duration(sum/admitted) * time.Microsecond)
			}
			if got.Delayed != delayed || got.MeanDelay != wantMean || got.MaxDelay != Duration(time.Duration(most)*time.Microsecond) {
				t.Errorf("round %d %s: %d delayed, mean %v, max %v; want %d, %v, %v",
					round, got.Limit, got.Delayed, got.MeanDelay, got.MaxDelay, delayed, wantMean, Duration(time.Duration(most)*time.Microsecond))
			}
			wantMax, wantMeanBytes := int64(16), 16.0
			if usesLog(c.Limit.Algorithm()) {
				var top, total int64
				for _, p := range peak {
					top = max(top, p)
					total += p
				}
				wantMax, wantMeanBytes = 16*top, 16*float64(total)/float64(len(sent))
			}
			if got.StateBytesMax != wantMax || got.StateBytesMean != wantMeanBytes {
				t.Errorf("round %d %s: state %d B max, %v B mean; want %d, %v", round, got.Limit, got.StateBytesMax, got.StateBytesMean, wantMax, wantMeanBytes)
			}
		}
	}
}
