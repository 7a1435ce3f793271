package sluice

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// AdmitOne is Decide wherever it answers: over sequences of calls from any
// state, at any time (the clock may step back), it admits exactly where
// Decide admits a bucket limit without queue or delay, with the same Status
// and the same state to the tick, and declines everything else, writing
// nothing.
func TestPropertyAdmitOneIsDecide(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genBucketLimit(t)
		if rapid.IntRange(0, 5).Draw(t, "other algorithm") == 0 {
			// The other algorithms' states do not fit two words: declined.
			alg := rapid.SampledFrom([]Algorithm{AlgorithmFixedWindow, AlgorithmSlidingLog, AlgorithmSlidingCounter, AlgorithmConcurrency}).Draw(t, "alg")
			other := NewLimit(alg, rapid.Int64Range(1, 1000).Draw(t, "q"), time.Second)
			var tw, ww int64
			var st Status
			if reset, ok := other.AdmitOne(&tw, &ww, rapid.Int64().Draw(t, "now"), 1, &st); ok || reset != 0 || tw != 0 || ww != 0 || st != (Status{}) {
				t.Fatalf("AdmitOne answered for %v", other)
			}
			return
		}
		words, state := twoWords(l)
		now := rapid.OneOf(rapid.Int64Range(-1<<50, 1<<50), rapid.Int64()).Draw(t, "t0")
		tw, ww := words(genBucketState(t, now))
		admitted := 0
		for i := range rapid.IntRange(1, 40).Draw(t, "n") {
			if i > 0 {
				now += genStep(t, l)
			}
			cost := genCost(t, l)
			before := state(tw, ww)
			next, want := l.Decide(before, now, cost)
			var got Status
			gt, gw := tw, ww
			reset, ok := l.AdmitOne(&gt, &gw, now, cost, &got)
			fast := l.alg.bucket() && l.maxWait == 0 && cost > 0 && want.Allowed && want.Delay == 0
			switch {
			case ok != fast:
				t.Fatalf("%v at %d, cost %d, state %+v: AdmitOne %v, Decide %+v", l, now, cost, before, ok, want)
			case !ok && (gt != tw || gw != ww || got != Status{}):
				t.Fatalf("AdmitOne declined but wrote (%d, %d), %+v", gt, gw, got)
			case ok && durationFromMicros(reset) != want.ResetAfter || !ok && reset != 0:
				t.Fatalf("%v at %d, cost %d, state %+v: AdmitOne's reset %d µs, Decide %+v", l, now, cost, before, reset, want)
			case ok && got != want:
				t.Fatalf("%v at %d, cost %d, state %+v: AdmitOne %+v, Decide %+v", l, now, cost, before, got, want)
			case ok && !sameState(state(gt, gw), next):
				t.Fatalf("%v at %d, cost %d, state %+v: AdmitOne left (%d, %d), Decide %+v", l, now, cost, before, gt, gw, next)
			}
			if ok {
				admitted++
			}
			tw, ww = words(next)
			if !sameState(state(tw, ww), next) {
				t.Fatalf("Decide's state %+v has a third word: a store keeping two would lose it", next)
			}
		}
		t.Log("admitted by AdmitOne:", admitted)
	})
}

// twoWords returns how a store keeps a bucket limit's State for AdmitOne:
// T and one other word (B for GCRA, A for the others).
func twoWords(l Limit) (words func(State) (int64, int64), state func(t, w int64) State) {
	if l.alg == AlgorithmGCRA {
		return func(s State) (int64, int64) { return s.T, s.B }, func(t, w int64) State { return State{T: t, B: w} }
	}
	return func(s State) (int64, int64) { return s.T, s.A }, func(t, w int64) State { return State{T: t, A: w} }
}

// genStep draws the time from one call to the next, in µs: none, a few,
// a window either way, a long step either way, or about one unit's refill.
func genStep(t *rapid.T, l Limit) int64 {
	return rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(-l.w, 2*l.w), rapid.Int64Range(-1<<47, 1<<47),
		rapid.Int64Range(1, max(l.w/max(l.q, 1), 1))).Draw(t, "dt")
}

// genCost draws a call's cost: small, around the burst, or huge (never
// negative).
func genCost(t *rapid.T, l Limit) int64 {
	return max(rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(0, l.b+1), rapid.Int64Range(-1, 1<<40)).Draw(t, "cost"), 0)
}
