package algo

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// refundKinds are the kinds Refund takes charges back from.
var refundKinds = map[string]Kind{"fixed window": KindFixedWindow, "sliding counter": KindSlidingCounter, "sliding log": KindSlidingLog}

// A charge refunded is a charge never made: a run that charges and later
// refunds some of its admissions decides every later check exactly as a
// run that never made them, for random limits, costs and forward times.
// Each refund happens at a random later time, inside or past the window
// that counted the charge.
func TestRefundAfterChargeIsNeverCharged(t *testing.T) {
	for name, kind := range refundKinds {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				q := rapid.Int64Range(1, 12).Draw(t, "q")
				w := rapid.Int64Range(1, 50).Draw(t, "w")
				p, _ := NewParams(kind, q, w, q, 0)
				var with, without State // with: charges and refunds; without: only the charges kept
				type charge struct{ at, cost int64 }
				var open []charge // charged in with, not yet refunded nor made in without
				now := rapid.Int64Range(-3*w, 3*w).Draw(t, "start")
				steps := rapid.IntRange(1, 40).Draw(t, "steps")
				for i := range steps {
					now += rapid.Int64Range(0, w).Draw(t, "dt")
					if len(open) > 0 && rapid.Bool().Draw(t, "refund") {
						j := rapid.IntRange(0, len(open)-1).Draw(t, "which")
						c := open[j]
						open = append(open[:j], open[j+1:]...)
						with = Refund(&p, with, c.at, c.cost)
					} else {
						cost := rapid.Int64Range(1, q).Draw(t, "cost")
						var v Verdict
						if Decide(&p, &with, now, cost, &v) {
							if rapid.Bool().Draw(t, "to refund") {
								open = append(open, charge{v.Charged, cost})
							} else {
								var w2 Verdict
								if !Decide(&p, &without, now, cost, &w2) {
									t.Fatalf("step %d: admitted with more charged, refused with less", i)
								}
							}
						}
					}
					if len(open) == 0 {
						samePeeks(t, &p, with, without, now, i)
					}
				}
				for _, c := range open {
					with = Refund(&p, with, c.at, c.cost)
				}
				samePeeks(t, &p, with, without, now, steps)
			})
		})
	}
}

// samePeeks fails unless a and b report the same at now and at times up to
// two windows later.
func samePeeks(t *rapid.T, p *Params, a, b State, now int64, step int) {
	for _, at := range []int64{now, now + 1, now + p.W/2, now + p.W, now + p.W + 1, now + 2*p.W} {
		var va, vb Verdict
		Decide(p, &a, at, 0, &va)
		Decide(p, &b, at, 0, &vb)
		if va != vb {
			t.Fatalf("step %d, peek at %d: refunded %+v (state %+v), never charged %+v (state %+v)", step, at, va, a, vb, b)
		}
		for _, cost := range []int64{1, p.Q} {
			Decide(p, &a, at, cost, &va)
			Decide(p, &b, at, cost, &vb)
			// Charged may differ: a log entry the refund emptied no longer holds time back.
			va.Charged, vb.Charged = 0, 0
			if va != vb {
				t.Fatalf("step %d, cost %d at %d: refunded %+v, never charged %+v", step, cost, at, va, vb)
			}
		}
	}
}

// Refund is exact for a charge a clock step back counted in a later window
// (its Charged names that window), and gives back nothing for a charge whose
// window has gone.
func TestRefundEdges(t *testing.T) {
	fw, _ := NewParams(KindFixedWindow, 10, 100, 10, 0)
	s := State{T: 200, A: 4}
	var v Verdict
	FixedWindow(&fw, &s, 150, 3, &v) // clock stepped back into the window before
	if v.Charged != 200 || s.A != 7 {
		t.Fatalf("charged %d, state %+v; want 200 and 7 units in window 200", v.Charged, s)
	}
	if got := Refund(&fw, s, v.Charged, 3); got.A != 4 || got.T != 200 {
		t.Errorf("refund after a step back: %+v, want 4 units in window 200", got)
	}
	if got := Refund(&fw, State{T: 300, A: 5}, v.Charged, 3); got.A != 5 {
		t.Errorf("refund into a later window: %+v, want it untouched", got)
	}

	sc, _ := NewParams(KindSlidingCounter, 10, 100, 10, 0)
	if got := Refund(&sc, State{T: 300, A: 2, B: 6}, 250, 4); got.B != 2 || got.A != 2 {
		t.Errorf("sliding counter, charge now in the previous window: %+v, want B 2", got)
	}
	if got := Refund(&sc, State{T: 400, A: 2, B: 6}, 250, 4); got.A != 2 || got.B != 6 {
		t.Errorf("sliding counter, charge two windows back: %+v, want it untouched", got)
	}

	sl, _ := NewParams(KindSlidingLog, 10, 100, 10, 0)
	log := []Entry{{At: 10, Units: 2}, {At: 20, Units: 1}, {At: 20, Units: 3}}
	got := Refund(&sl, State{Log: log}, 20, 3)
	if want := []Entry{{At: 10, Units: 2}, {At: 20, Units: 1}}; fmt.Sprint(got.Log) != fmt.Sprint(want) {
		t.Errorf("sliding log: %v, want %v", got.Log, want)
	}
	if log[2].Units != 3 {
		t.Errorf("Refund modified the caller's log: %v", log)
	}
	if got := Refund(&sl, State{Log: log[:1]}, 20, 3); len(got.Log) != 1 {
		t.Errorf("sliding log without the entry: %v, want it untouched", got.Log)
	}
	if got := Refund(&sl, State{Log: []Entry{{At: 20, Units: 3}}}, 20, 3); got.Log != nil {
		t.Errorf("sliding log emptied: %+v, want the zero State", got)
	}

	for _, k := range []Kind{KindTokenBucket, KindLeakyBucket, KindGCRA, KindConcurrency} {
		if Refundable(k) {
			t.Errorf("%v is Refundable", k)
		}
	}
}
