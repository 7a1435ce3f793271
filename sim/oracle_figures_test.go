package sim

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
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

// The most admitted for one key in one calendar month, held to a
// brute-force count over the admissions grouped by the year and month
// time.Time gives each (shifted by the periods' offset), on traces
// crowded around the starts of months.
func TestWorstPeriodMatchesBruteForceOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 23))
	const day = int64(24 * time.Hour / time.Microsecond)
	for round := range 40 {
		q := 1 + rng.Int64N(6)
		offset := time.Duration(rng.Int64N(28*day)) * time.Microsecond
		keys := 1 + rng.IntN(3)
		tr := &Trace{Source: "oracle", End: 200 * day}
		for k := range keys {
			tr.Keys = append(tr.Keys, string(rune('a'+k)))
		}
		for range 1 + rng.IntN(150) {
			// Within two days of the start of a (shifted) month, or anywhere.
			at := rng.Int64N(tr.End)
			if rng.IntN(2) == 0 {
				m := sluice.TimeFromMicros(at)
				start := time.Date(m.Year(), m.Month(), 1, 0, 0, 0, 0, time.UTC).Add(offset)
				at = min(max(sluice.MicrosSinceEpoch(start)+rng.Int64N(4*day)-2*day, 0), tr.End-1)
			}
			tr.Arrivals = append(tr.Arrivals, Arrival{At: at, Key: int32(rng.IntN(keys)), Cost: rng.Int64N(3)})
		}
		slices.SortStableFunc(tr.Arrivals, func(a, b Arrival) int { return cmp.Compare(a.At, b.At) })
		r := calendarRate(q, sluice.Month, offset)
		cs, err := r.contenders(sluice.Algorithms(), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), tr, Config{Quantity: q, Window: r.w, Period: sluice.Month, Offset: offset, Contenders: cs, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for ci, c := range cs {
			type month struct {
				key   int32
				year  int
				month time.Month
			}
			units := map[month]int64{}
			states := map[int32]sluice.State{}
			var want int64
			for _, a := range tr.Arrivals {
				next, st, err := c.Limit.Decide(states[a.Key], a.At, a.Cost)
				if err != nil {
					t.Fatal(err)
				}
				if !st.Allowed {
					continue
				}
				states[a.Key] = next
				u := sluice.TimeFromMicros(a.At + st.Delay.Microseconds()).Add(-offset)
				m := month{a.Key, u.Year(), u.Month()}
				units[m] += a.Cost
				want = max(want, units[m])
			}
			if got := res.Algorithms[ci]; got.WorstPeriod != want {
				t.Errorf("round %d (q %d, offset %v) %s: %d in one month, want %d", round, q, offset, got.Label, got.WorstPeriod, want)
			}
		}
	}
}
