package algo

import (
	"testing"

	"pgregory.net/rapid"
)

// A bucket's debt is a refill time, whatever the parameters that read it:
// a client that spent a whole 10-per-hour bucket finds a 7-per-hour bucket
// of burst 7 (the same limit scaled by 0.7, or reloaded) empty as well, and
// one that spent half finds it half empty. Token and leaky buckets alike,
// as GCRA.
func TestBucketDebtCarriesAsRefillTimeAcrossRates(t *testing.T) {
	const hour = 3600e6
	for _, k := range []Kind{KindTokenBucket, KindLeakyBucket, KindGCRA} {
		from, _ := NewParams(k, 10, hour, 10, 0)
		to, _ := NewParams(k, 7, hour, 7, 0)
		for _, c := range []struct{ spent, want int64 }{{10, 0}, {5, 3}, {1, 6}} {
			var s State
			var v Verdict
			if !Decide(&from, &s, 1000, c.spent, &v) {
				t.Fatalf("kind %d: spending %d of a fresh 10/h bucket was refused", k, c.spent)
			}
			Decide(&to, &s, 1000, 0, &v)
			if v.Remaining != c.want {
				t.Errorf("kind %d: %d of 10/h spent leaves %d of 7/h, want %d", k, c.spent, v.Remaining, c.want)
			}
			if Decide(&to, &s, 1000, c.want+1, &v) {
				t.Errorf("kind %d: %d of 10/h spent, then %d of 7/h admitted at once, want at most %d",
					k, c.spent, c.want+1, c.want)
			}
		}
	}
}

// On a clock that does not step back, under unchanged parameters, a token
// or leaky bucket decides from a state in the form earlier versions wrote
// (T the last update, A the ticks missing then) exactly as from the same
// bucket in GCRA's form: the same verdict to the µs, so that an upgrade
// changes no decision.
func TestPropertyBucketFormsDecideAlikeOnAMonotonicClock(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genBucketLimit(t)
		if l.Kind == KindGCRA {
			l, _ = NewParams(rapid.SampledFrom([]Kind{KindTokenBucket, KindLeakyBucket}).Draw(t, "kind"), l.Q, l.W, l.B, 0)
		}
		now := rapid.Int64Range(-1<<50, 1<<50).Draw(t, "t0")
		var s, old State
		for i := range rapid.IntRange(1, 30).Draw(t, "n") {
			if i > 0 {
				now += rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(0, 2*l.W),
					rapid.Int64Range(1, max(l.W/l.Q, 1))).Draw(t, "dt")
			}
			cost := rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(0, l.B+1)).Draw(t, "cost")
			var v, oldV Verdict
			ok := Decide(&l, &s, now, cost, &v)
			oldOK := Decide(&l, &old, now, cost, &oldV)
			if ok != oldOK || v != oldV {
				t.Fatalf("%v at %d cost %d: GCRA's form %v %+v, the earlier form %v %+v", l, now, cost, ok, v, oldOK, oldV)
			}
			if ok {
				// The earlier form of the bucket just written: missing
				// (TAT-now)·RQ + fraction ticks at now.
				old = State{T: now, A: (s.T-now)*l.RQ + s.B - 1}
			}
		}
	})
}
