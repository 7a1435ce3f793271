package conformance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/sluice-dev/sluice"
)

// Random returns a scenario drawn from seed: three subjects, a handful of
// limits of every algorithm (concurrency included) with parameters from tiny to the bounds
// (fractional rates, bursts, queues, shadows, a name reused with other
// parameters), and 80 calls of one to four checks at times that stand
// still, creep, jump by about a window, leap days ahead or step back, some
// of them first giving back the concurrency leases of an earlier call,
// some the charges of one (whole, in part or beyond them), some of the
// limits scaled by a degradation factor (sluice.Limit.Scale). The same seed
// always gives the same scenario.
func Random(seed uint64) Scenario {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	// Refunds and scaling draw from a stream of their own, so that they
	// leave the calls of each seed as they were before there were any.
	x := rand.New(rand.NewPCG(seed, 0x4efd))
	limits := make([]sluice.Limit, 3+r.IntN(4))
	for i := range limits {
		limits[i] = randomLimit(r).Named(fmt.Sprintf("l%d", i))
	}
	// Now and then the same name under other parameters of its algorithm:
	// a plan change, which Decide must clamp.
	variants := make([]sluice.Limit, len(limits))
	for i, l := range limits {
		variants[i] = l
		if r.IntN(4) == 0 {
			variants[i] = sameAlgorithm(r, l).Named(l.Name())
		}
	}
	subjects := []string{"alice", "bob", "global"}
	sc := Scenario{
		Name:  fmt.Sprintf("seed=%d", seed),
		Start: DefaultStart.Add(time.Duration(r.Int64N(int64(48 * time.Hour)))).Truncate(time.Microsecond),
	}
	released, refunded := map[int]bool{}, map[int]bool{}
	for n := range 80 {
		st := Step{Advance: randomAdvance(r, limits[r.IntN(len(limits))])}
		if n > 0 && r.IntN(4) == 0 { // give back an earlier call's leases, if it took any
			if k := r.IntN(n); !released[k] {
				released[k] = true
				st.Release = []int{k}
			}
		}
		if n > 0 && x.IntN(4) == 0 { // give back an earlier call's charges, if it made any
			if k := x.IntN(n); !refunded[k] {
				refunded[k] = true
				st.Refund = []Refund{{Step: k, Costs: refundCosts(x, sc.Steps[k].Checks)}}
			}
		}
		used := map[[2]int]bool{}
		for range 1 + r.IntN(4) {
			li, si := r.IntN(len(limits)), r.IntN(len(subjects))
			if used[[2]int{li, si}] {
				continue
			}
			used[[2]int{li, si}] = true
			l := limits[li]
			if r.IntN(5) == 0 {
				l = variants[li]
			}
			if r.IntN(6) == 0 {
				l = l.WithShadow(true)
			}
			if x.IntN(6) == 0 {
				l = l.Scale(1+x.Int64N(4), 2+x.Int64N(7))
			}
			st.Checks = append(st.Checks, check(subjects[si], l, randomCost(r, l)))
		}
		sc.Steps = append(sc.Steps, st)
	}
	return sc
}

// refundCosts draws what the checks of a call give back: nil (each its
// own cost) or, per check, a part of its cost or more than it.
func refundCosts(x *rand.Rand, checks []sluice.Check) []int64 {
	if x.IntN(2) == 0 {
		return nil
	}
	costs := make([]int64, len(checks))
	for i, c := range checks {
		cost := min(c.Cost, c.Limit.Burst()) // a larger cost charged nothing
		switch x.IntN(3) {
		case 0:
			costs[i] = cost
		case 1:
			costs[i] = x.Int64N(cost + 1)
		default:
			costs[i] = cost + 1 + x.Int64N(c.Limit.Quantity())
		}
	}
	return costs
}

func randomLimit(r *rand.Rand) sluice.Limit {
	for {
		algs := append(sluice.Algorithms(), sluice.AlgorithmConcurrency)
		alg := algs[r.IntN(len(algs))]
		l := sluice.NewLimit(alg, randomQuantity(r), randomWindow(r))
		if alg == sluice.AlgorithmFixedWindow && r.IntN(3) == 0 {
			l = randomCalendar(r)
		}
		l = withBucketOptions(r, l)
		if l.Err() == nil {
			return l
		}
	}
}

// sameAlgorithm returns another valid limit of l's algorithm.
func sameAlgorithm(r *rand.Rand, l sluice.Limit) sluice.Limit {
	for {
		m := withBucketOptions(r, sluice.NewLimit(l.Algorithm(), randomQuantity(r), randomWindow(r)))
		if l.Algorithm() == sluice.AlgorithmFixedWindow && r.IntN(2) == 0 {
			m = randomCalendar(r)
		}
		if m.Err() == nil {
			return m
		}
	}
}

func withBucketOptions(r *rand.Rand, l sluice.Limit) sluice.Limit {
	switch l.Algorithm() {
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmLeakyBucket, sluice.AlgorithmGCRA:
		if r.IntN(2) == 0 {
			l = l.WithBurst(1 + r.Int64N(max(2*l.Quantity(), 10)))
		}
	}
	if l.Algorithm() == sluice.AlgorithmLeakyBucket && r.IntN(2) == 0 {
		l = l.WithMaxWait(time.Duration(1+r.Int64N(int64(l.Window()/time.Microsecond)*2)) * time.Microsecond)
	}
	return l
}

// randomCalendar returns a calendar limit of any period, in the UTC
// calendar or shifted by an offset of up to its shortest period.
func randomCalendar(r *rand.Rand) sluice.Limit {
	period := sluice.Period(1 + r.IntN(4))
	l := sluice.Calendar(randomQuantity(r), period)
	if r.IntN(2) == 0 {
		span := int64(l.Window()/us)*28/31 - 1 // below every period's shortest
		l = l.WithOffset(time.Duration(r.Int64N(2*span)-span) * us)
	}
	return l
}

func randomQuantity(r *rand.Rand) int64 {
	switch r.IntN(6) {
	case 0:
		return 1 + r.Int64N(3)
	case 1:
		return 1 + r.Int64N(10)
	case 2:
		return []int64{3, 7, 10, 60, 100, 999, 1000}[r.IntN(7)]
	case 3:
		return 1 + r.Int64N(1000)
	case 4:
		return []int64{1_000_000, 999_999, 86_400_001}[r.IntN(3)]
	default:
		return 1 + r.Int64N(sluice.MaxQuantity)
	}
}

func randomWindow(r *rand.Rand) time.Duration {
	switch r.IntN(4) {
	case 0:
		return []time.Duration{us, ms, sec, time.Minute, time.Hour, day}[r.IntN(6)]
	case 1:
		return time.Duration(1+r.Int64N(int64(10*sec/us))) * us
	case 2:
		return []time.Duration{7 * sec, 10 * sec, 90 * sec, 7 * day}[r.IntN(4)]
	default:
		return time.Duration(1+r.Int64N(int64(sluice.MaxWindow/us))) * us
	}
}

// randomAdvance draws a clock move scaled to l's window.
func randomAdvance(r *rand.Rand, l sluice.Limit) time.Duration {
	w := int64(l.Window() / us)
	unit := max(w/max(l.Quantity(), 1), 1)
	var d int64
	switch r.IntN(10) {
	case 0, 1:
		d = 0
	case 2, 3:
		d = 1 + r.Int64N(unit)
	case 4, 5:
		d = 1 + r.Int64N(2*w)
	case 6:
		d = w - 2 + r.Int64N(5)
	case 7:
		d = 1 + r.Int64N(int64(3*day/us))
	case 8:
		d = 1 + r.Int64N(int64(sec/us))
	case 9:
		d = -(1 + r.Int64N(min(3*w, int64(30*day/us))))
	}
	return time.Duration(d) * us
}

func randomCost(r *rand.Rand, l sluice.Limit) int64 {
	b := l.Burst()
	switch r.IntN(8) {
	case 0:
		return 0
	case 1, 2, 3:
		return 1 + r.Int64N(min(b, 3))
	case 4, 5:
		return r.Int64N(b + 1)
	case 6:
		return b + r.Int64N(3)
	default:
		if r.IntN(4) == 0 {
			return math.MaxInt64
		}
		return 1
	}
}
