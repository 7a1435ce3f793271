package sluice_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
)

// DecideBatch: a batch is admitted only if every enforcing check fits on its
// own; then each check's state is exactly what Decide alone gives. Otherwise
// no state changes and the fitting checks report as peeks.
func TestPropertyBatchIsAllOrNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "checks")
		checks := make([]sluice.Check, n)
		states := make([]sluice.State, n)
		now := rapid.Int64Range(0, 1<<50).Draw(t, "now")
		for i := range checks {
			l := genLimit(t, rapid.SampledFrom(sluice.Algorithms()).Draw(t, "alg"))
			l = l.Named("l" + string(rune('a'+i))).WithShadow(rapid.IntRange(0, 4).Draw(t, "shadow") == 0)
			// Give each check some history.
			for range rapid.IntRange(0, 5).Draw(t, "history") {
				states[i], _ = l.Decide(states[i], now-rapid.Int64Range(0, 1000).Draw(t, "ago"), rapid.Int64Range(1, l.Burst()).Draw(t, "used"))
			}
			checks[i] = sluice.Check{Key: "k", Limit: l, Cost: rapid.Int64Range(0, l.Burst()+1).Draw(t, "cost")}
		}
		before := make([]sluice.State, n)
		alone := make([]sluice.Status, n)
		next := make([]sluice.State, n)
		blocked := false
		for i, c := range checks {
			before[i] = cloneState(states[i])
			next[i], alone[i] = c.Limit.Decide(cloneState(states[i]), now, c.Cost)
			blocked = blocked || !alone[i].Allowed && !c.Limit.Shadow()
		}
		out := make([]sluice.Status, n)
		sluice.DecideBatch(checks, states, now, out)
		for i, c := range checks {
			switch {
			case blocked || !alone[i].Allowed:
				if !equalState(states[i], before[i]) {
					t.Fatalf("check %d changed state in a refused batch (or was refused itself)", i)
				}
				_, peek := c.Limit.Decide(before[i], now, 0)
				if alone[i].Allowed && out[i] != peek {
					t.Fatalf("check %d: %+v, want its peek %+v", i, out[i], peek)
				}
				if !alone[i].Allowed && out[i] != alone[i] {
					t.Fatalf("refused check %d: %+v, want %+v", i, out[i], alone[i])
				}
			default:
				if !equalState(states[i], next[i]) || out[i] != alone[i] {
					t.Fatalf("check %d of an admitted batch: %+v, want %+v", i, out[i], alone[i])
				}
			}
		}
	})
}

func TestLeakyQueueBurst(t *testing.T) {
	// A burst of 20 against 5/s with max wait 2 s: 5 pass at once, 10 wait
	// 0.2 s … 2.0 s (the leak rate), 5 are refused.
	l := sluice.LeakyBucket(5, time.Second).WithMaxWait(2 * time.Second)
	var s sluice.State
	now := 100 * sec
	var admitted, refused int
	for i := range 20 {
		var st sluice.Status
		s, st = l.Decide(s, now, 1)
		if !st.Allowed {
			refused++
			if st.RetryAfter != 200*time.Millisecond {
				t.Errorf("request %d: retry after %v, want 200ms (one leak)", i, st.RetryAfter)
			}
			continue
		}
		admitted++
		want := time.Duration(max(0, i-4)) * 200 * time.Millisecond
		if st.Delay != want {
			t.Errorf("request %d: delay %v, want %v", i, st.Delay, want)
		}
	}
	if admitted != 15 || refused != 5 {
		t.Errorf("admitted %d refused %d, want 15 and 5", admitted, refused)
	}
}
