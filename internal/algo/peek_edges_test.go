package algo

import "testing"

// "cost 0 (a peek, always allowed)" (Decide),
// also over a state that counts more than this limit's quantity (written
// under a larger one, before a reload or a degradation level scaled it
// down): the peek is allowed, shows 0 remaining and leaves the state.
func TestAPeekIsAllowedOverAnOverfullState(t *testing.T) {
	states := map[Kind]State{
		KindFixedWindow:    {T: 500, A: 15},
		KindSlidingCounter: {T: 0, A: 15},
		KindSlidingLog:     {Log: []Entry{{At: 500, Units: 15}}},
		KindConcurrency:    {Log: []Entry{{At: 500, Units: 15}}},
	}
	for kind, s := range states {
		p, _ := NewParams(kind, 10, 1000, 10, 0)
		before := s
		var v Verdict
		if Decide(&p, &s, 600, 0, &v) || !v.Allowed || v.Remaining != 0 || v.Retry != 0 {
			t.Errorf("kind %d: peek over 15 counted of 10: %+v, want allowed with 0 remaining", kind, v)
		}
		if s.T != before.T || s.A != before.A || len(s.Log) != len(before.Log) {
			t.Errorf("kind %d: a peek changed the state: %+v, was %+v", kind, s, before)
		}
	}
}
