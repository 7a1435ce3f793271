package sluice

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// genQuickLimit draws a bucket limit that is, most of the time, one
// AdmitGCRA or AdmitLevel answers for: a quantity that divides the window.
func genQuickLimit(t *rapid.T) Limit {
	if rapid.IntRange(0, 3).Draw(t, "any bucket limit") == 0 {
		return genBucketLimit(t)
	}
	alg := rapid.SampledFrom([]Algorithm{AlgorithmTokenBucket, AlgorithmLeakyBucket, AlgorithmGCRA}).Draw(t, "alg")
	q := rapid.OneOf(rapid.Int64Range(1, 10), rapid.SampledFrom([]int64{1, 60, 100, 10_000, 1e6})).Draw(t, "q")
	per := rapid.OneOf(rapid.Int64Range(1, 1000), rapid.SampledFrom([]int64{1, 1000, 60_000, 1 << 20})).Draw(t, "µs per unit")
	l := NewLimit(alg, q, time.Duration(q*per)*time.Microsecond)
	if rapid.Bool().Draw(t, "custom burst") {
		l = l.WithBurst(rapid.OneOf(rapid.Int64Range(1, 10), rapid.Int64Range(1, 1e6)).Draw(t, "burst"))
	}
	if l.Err() != nil {
		t.Fatalf("generated an invalid limit: %v", l.Err())
	}
	return l
}

// AdmitGCRA and AdmitLevel, with Admitted, are AdmitOne wherever they
// answer (the same Status, reset and state), decline having written
// nothing, and answer wherever AdmitOne admits a limit whose quantity
// divides its window, without a queue — but for a token or leaky bucket
// whose state is later than now, or at a now Decide would clamp — each for
// its own algorithms only. So they are also Decide there
// (TestPropertyAdmitOneIsDecide).
func TestPropertyQuickIsAdmitOne(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genQuickLimit(t)
		gcra := l.alg == AlgorithmGCRA
		words, state := twoWords(l)
		// Decided from public facts, not from the limit's own quick field.
		eligible := l.Window()%time.Microsecond == 0 && int64(l.Window()/time.Microsecond)%l.Quantity() == 0 && l.MaxWait() == 0
		now := rapid.OneOf(rapid.Int64Range(-1<<50, 1<<50), rapid.Int64()).Draw(t, "t0")
		tw, ww := words(genBucketState(t, now))
		quick := 0
		for i := range rapid.IntRange(1, 40).Draw(t, "n") {
			if i > 0 {
				now += genStep(t, l)
			}
			cost := genCost(t, l)
			var wantSt, gotSt Status
			wt, ww2 := tw, ww
			wantReset, wantOK := l.AdmitOne(&wt, &ww2, now, cost, &wantSt)
			gt, gw := tw, ww
			// The one for the other algorithms declines, writing nothing.
			other := (*Limit).AdmitLevel
			if !gcra {
				other = (*Limit).AdmitGCRA
			}
			if reset, ok := other(&l, &gt, &gw, now, cost); ok || reset != 0 || gt != tw || gw != ww {
				t.Fatalf("the quick admission of other algorithms answered for %v", l)
			}
			quickOne := (*Limit).AdmitGCRA
			if !gcra {
				quickOne = (*Limit).AdmitLevel
			}
			gotReset, gotOK := quickOne(&l, &gt, &gw, now, cost)
			if gotOK {
				l.Admitted(&gotSt, gotReset)
			}
			leftToAdmitOne := !gcra && (tw > now || now < minTime || now > maxTime)
			switch {
			case gotOK && (!wantOK || gotReset != wantReset || gotSt != wantSt || gt != wt || gw != ww2):
				t.Fatalf("%v at %d, cost %d, state (%d, %d): quick %v %d %+v (%d, %d), AdmitOne %v %d %+v (%d, %d)",
					l, now, cost, tw, ww, gotOK, gotReset, gotSt, gt, gw, wantOK, wantReset, wantSt, wt, ww2)
			case !gotOK && (gt != tw || gw != ww || gotReset != 0):
				t.Fatalf("the quick admission declined but wrote (%d, %d), %d", gt, gw, gotReset)
			case !gotOK && wantOK && eligible && !leftToAdmitOne:
				t.Fatalf("%v at %d, cost %d, state (%d, %d): the quick admission declined what AdmitOne admitted", l, now, cost, tw, ww)
			case gotOK && !eligible:
				t.Fatalf("the quick admission answered for %v, whose quantity does not divide its window", l)
			}
			if gotOK {
				quick++
			}
			if wantOK {
				tw, ww = wt, ww2
			} else {
				next, _ := l.Decide(state(tw, ww), now, cost)
				tw, ww = words(next)
			}
		}
		t.Log("answered by the quick admission:", quick)
	})
}
