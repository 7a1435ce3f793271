package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// The figures Run reports, held to oracles that share none of its
// bookkeeping: brute force over the trace in exact integer arithmetic.

// oracleWorst returns the most units in any half-open window of length w
// whose start is any real number, by brute force: the count of points in
// [s, s+w) changes only where s passes a point or a point minus w, so s is
// tried at each such critical value and halfway between consecutive ones
// (times doubled to keep the halves integers). closedEnd counts (s, s+w]
// instead.
func oracleWorst(ts, units []int64, w int64, closedEnd bool) int64 {
	var crit []int64
	for _, t := range ts {
		crit = append(crit, 2*t, 2*(t-w))
	}
	slices.Sort(crit)
	crit = slices.Compact(crit)
	var cand []int64
	for i, c := range crit {
		cand = append(cand, c-1, c)
		if i+1 < len(crit) {
			cand = append(cand, (c+crit[i+1])/2)
		}
		cand = append(cand, c+1)
	}
	var worst int64
	for _, s := range cand {
		var sum int64
		for i, t := range ts {
			in := s <= 2*t && 2*t < s+2*w
			if closedEnd {
				in = s < 2*t && 2*t <= s+2*w
			}
			if in {
				sum += units[i]
			}
		}
		worst = max(worst, sum)
	}
	return worst
}

// oracleLog decides an exact sliding window log of q per w by brute force:
// a request of cost c at t is admitted when the units admitted for its key
// in (t-w, t] plus c are at most q (cost 0 always).
type oracleLog struct {
	q, w int64
	at   map[int32][]int64
	u    map[int32][]int64
}

func (o *oracleLog) decide(key int32, t, cost int64) bool {
	var used int64
	for i, a := range o.at[key] {
		if a > t-o.w && a <= t {
			used += o.u[key][i]
		}
	}
	if cost == 0 {
		return true
	}
	if used+cost > o.q {
		return false
	}
	o.at[key] = append(o.at[key], t)
	o.u[key] = append(o.u[key], cost)
	return true
}

func randomTrace(rng *rand.Rand, keys, n int, span int64, maxCost int64) *Trace {
	tr := &Trace{Source: "oracle"}
	for k := range keys {
		tr.Keys = append(tr.Keys, fmt.Sprint("k", k))
	}
	for range n {
		at := rng.Int64N(span)
		if rng.IntN(4) == 0 && len(tr.Arrivals) > 0 { // duplicate times
			at = tr.Arrivals[rng.IntN(len(tr.Arrivals))].At
		}
		tr.Arrivals = append(tr.Arrivals, Arrival{At: at, Key: int32(rng.IntN(keys)), Cost: rng.Int64N(maxCost + 1)})
	}
	slices.SortStableFunc(tr.Arrivals, func(a, b Arrival) int { return int(a.At - b.At) })
	tr.End = span
	return tr
}

func TestFiguresMatchBruteForceOracles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 60 {
		q := 1 + rng.Int64N(8)
		w := 1 + rng.Int64N(50)
		keys := 1 + rng.IntN(3)
		tr := randomTrace(rng, keys, 1+rng.IntN(120), 10*w+rng.Int64N(20), q+2)
		burst := rng.Int64N(q + 3)
		var cs []Contender
		for _, a := range sluice.Algorithms() {
			cq, cw := q, w
			if round%2 == 1 { // contenders tuned apart from the requirement
				cq, cw = 1+rng.Int64N(8), 1+rng.Int64N(50)
			}
			l, err := LimitFor(a, cq, time.Duration(cw)*time.Microsecond, burst, time.Duration(rng.Int64N(2*w))*time.Microsecond)
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, Contender{Limit: l})
		}
		for _, interleaved := range []bool{false, true} {
			cfg := Config{Quantity: q, Window: time.Duration(w) * time.Microsecond, Contenders: cs, Workers: 1, interleaved: interleaved}
			res, err := Run(context.Background(), tr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ref := &oracleLog{q: q, w: w, at: map[int32][]int64{}, u: map[int32][]int64{}}
			refAllowed := make([]bool, len(tr.Arrivals))
			for i, a := range tr.Arrivals {
				refAllowed[i] = ref.decide(a.Key, a.At, a.Cost)
			}
			for ci, c := range cs {
				got := res.Algorithms[ci]
				states := make([]sluice.State, keys)
				var adm, rej, units, falseAllow, falseDeny, peak int64
				ts, us := map[int32][]int64{}, map[int32][]int64{}
				for i, a := range tr.Arrivals {
					next, st, err := c.Limit.Decide(states[a.Key], a.At, a.Cost)
					if err != nil {
						t.Fatal(err)
					}
					if st.Allowed != refAllowed[i] {
						if st.Allowed {
							falseAllow++
						} else {
							falseDeny++
						}
					}
					if !st.Allowed {
						rej++
						continue
					}
					states[a.Key] = next
					adm++
					units += a.Cost
					if a.Cost > 0 {
						ts[a.Key] = append(ts[a.Key], a.At+int64(st.Delay/time.Microsecond))
						us[a.Key] = append(us[a.Key], a.Cost)
					}
					if c.Limit.Algorithm() == sluice.AlgorithmSlidingLog {
						// entries of cost > 0 admitted for the key in (t-w, t]
						var n int64
						for _, x := range ts[a.Key] {
							if x > a.At-c.Limit.Window().Microseconds() {
								n++
							}
						}
						peak = max(peak, n)
					}
				}
				var worst, worstClosed int64
				for k := range ts {
					pts := ts[k]
					if !slices.IsSorted(pts) {
						t.Errorf("round %d %s: key %d proceeds out of order: %v", round, got.Label, k, pts)
					}
					worst = max(worst, oracleWorst(pts, us[k], w, false))
					worstClosed = max(worstClosed, oracleWorst(pts, us[k], w, true))
				}
				if worst != worstClosed {
					t.Fatalf("oracle: half-open conventions disagree: %d vs %d", worst, worstClosed)
				}
				want := AlgorithmResult{Decisions: int64(len(tr.Arrivals)), Admitted: adm, Rejected: rej, AdmittedUnits: units,
					WorstWindow: worst, FalseAllows: falseAllow, FalseDenials: falseDeny, Disagreements: falseAllow + falseDeny}
				gotSub := AlgorithmResult{Decisions: got.Decisions, Admitted: got.Admitted, Rejected: got.Rejected, AdmittedUnits: got.AdmittedUnits,
					WorstWindow: got.WorstWindow, FalseAllows: got.FalseAllows, FalseDenials: got.FalseDenials, Disagreements: got.Disagreements}
				if gotSub != want {
					t.Fatalf("round %d (q %d w %d burst %d, interleaved %v) %s:\n got %+v\nwant %+v", round, q, w, burst, interleaved, got.Limit, gotSub, want)
				}
				if c.Limit.Algorithm() == sluice.AlgorithmSlidingLog && got.StateBytesMax != 16*peak {
					t.Fatalf("round %d %s: state %d B, oracle %d B", round, got.Label, got.StateBytesMax, 16*peak)
				}
			}
		}
	}
}

// With retries, each contender's clients retry its own refusals: the
// oracle replays every contender's stream of arrivals and retries in time
// order (arrivals before retries due at the same µs, retries in the order
// they were made) with a plain sorted list, and decides each request with
// the brute-force exact log too.
func TestRetryFiguresMatchBruteForceOracles(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for round := range 40 {
		q := 1 + rng.Int64N(6)
		w := 5 + rng.Int64N(40)
		keys := 1 + rng.IntN(3)
		tr := randomTrace(rng, keys, 1+rng.IntN(60), 8*w, q+1)
		policy := RetryPolicy{Max: 1 + rng.IntN(4), Impatient: float64(rng.IntN(2)), Gap: Duration(time.Duration(rng.Int64N(5)) * time.Microsecond)}
		var cs []Contender
		for _, a := range sluice.Algorithms() {
			l, err := LimitFor(a, q, time.Duration(w)*time.Microsecond, 0, time.Duration(rng.Int64N(w))*time.Microsecond)
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, Contender{Limit: l})
		}
		res, err := Run(context.Background(), tr, Config{Quantity: q, Window: time.Duration(w) * time.Microsecond, Contenders: cs, Retry: policy, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for ci, c := range cs {
			type req struct {
				at, cost, seq int64
				key           int32
				attempt       int
				retry         bool
			}
			var queue []req
			for i, a := range tr.Arrivals {
				queue = append(queue, req{at: a.At, cost: a.Cost, seq: int64(i), key: a.Key})
			}
			less := func(a, b req) int {
				switch {
				case a.at != b.at:
					return int(a.at - b.at)
				case a.retry != b.retry:
					if a.retry {
						return 1
					}
					return -1
				}
				return int(a.seq - b.seq)
			}
			ref := &oracleLog{q: q, w: w, at: map[int32][]int64{}, u: map[int32][]int64{}}
			states := make([]sluice.State, keys)
			var want AlgorithmResult
			ts, us := map[int32][]int64{}, map[int32][]int64{}
			var made int64
			for len(queue) > 0 {
				slices.SortStableFunc(queue, less)
				e := queue[0]
				queue = queue[1:]
				want.Decisions++
				next, st, err := c.Limit.Decide(states[e.key], e.at, e.cost)
				if err != nil {
					t.Fatal(err)
				}
				if c.Limit.Algorithm() != sluice.AlgorithmSlidingLog {
					if r := ref.decide(e.key, e.at, e.cost); r != st.Allowed {
						want.Disagreements++
						if st.Allowed {
							want.FalseAllows++
						} else {
							want.FalseDenials++
						}
					}
				}
				if st.Allowed {
					states[e.key] = next
					want.Admitted++
					want.AdmittedUnits += e.cost
					if e.cost > 0 {
						ts[e.key] = append(ts[e.key], e.at+st.Delay.Microseconds())
						us[e.key] = append(us[e.key], e.cost)
					}
					continue
				}
				want.Rejected++
				wait := st.RetryAfter.Microseconds()
				if policy.Impatient == 1 {
					wait = policy.Gap.D().Microseconds()
				}
				if e.attempt >= policy.Max || st.RetryAfter == sluice.Never || e.at+wait >= tr.End {
					want.GaveUp++
					continue
				}
				made++
				want.Retries++
				queue = append(queue, req{at: e.at + wait, cost: e.cost, seq: made, key: e.key, attempt: e.attempt + 1, retry: true})
			}
			for k := range ts {
				want.WorstWindow = max(want.WorstWindow, oracleWorst(ts[k], us[k], w, false))
			}
			got := res.Algorithms[ci]
			gotSub := AlgorithmResult{Decisions: got.Decisions, Admitted: got.Admitted, Rejected: got.Rejected, AdmittedUnits: got.AdmittedUnits,
				Retries: got.Retries, GaveUp: got.GaveUp, WorstWindow: got.WorstWindow,
				Disagreements: got.Disagreements, FalseAllows: got.FalseAllows, FalseDenials: got.FalseDenials}
			if gotSub != want {
				t.Fatalf("round %d (q %d w %d %+v) %s:\n got %+v\nwant %+v", round, q, w, policy, got.Limit, gotSub, want)
			}
		}
	}
}
