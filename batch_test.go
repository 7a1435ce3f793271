package sluice_test

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
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
				states[i], _ = storetest.Decided(l.Decide(states[i], now-rapid.Int64Range(0, 1000).Draw(t, "ago"), rapid.Int64Range(1, l.Burst()).Draw(t, "used")))
			}
			checks[i] = sluice.Check{Key: "k", Limit: l, Cost: rapid.Int64Range(0, l.Burst()+1).Draw(t, "cost")}
		}
		before := make([]sluice.State, n)
		alone := make([]sluice.Status, n)
		next := make([]sluice.State, n)
		blocked := false
		for i, c := range checks {
			before[i] = cloneState(states[i])
			next[i], alone[i] = storetest.Decided(c.Limit.Decide(cloneState(states[i]), now, c.Cost))
			blocked = blocked || !alone[i].Allowed && !c.Limit.Shadow()
		}
		out := make([]sluice.Status, n)
		if _, err := sluice.DecideBatch(checks, states, now, out); err != nil {
			t.Fatal(err)
		}
		for i, c := range checks {
			switch {
			case blocked || !alone[i].Allowed:
				if !equalState(states[i], before[i]) {
					t.Fatalf("check %d changed state in a refused batch (or was refused itself)", i)
				}
				_, peek := storetest.Decided(c.Limit.Decide(before[i], now, 0))
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
		s, st = storetest.Decided(l.Decide(s, now, 1))
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

// What the pure core cannot decide is an error, never a panic nor a
// decision: an invalid or zero Limit, a negative cost, states or statuses
// not one per check. Nothing is written then.
func TestUndecidableIsAnError(t *testing.T) {
	ok := sluice.PerMinute(10)
	if _, _, err := (sluice.Limit{}).Decide(sluice.State{}, 0, 1); !errors.Is(err, sluice.ErrInvalidLimit) || !errors.Is(err, sluice.ErrInvalidCheck) {
		t.Errorf("zero Limit: %v, want ErrInvalidLimit and ErrInvalidCheck", err)
	}
	if _, _, err := sluice.PerMinute(0).Decide(sluice.State{}, 0, 1); !errors.Is(err, sluice.ErrInvalidLimit) {
		t.Errorf("PerMinute(0): %v, want ErrInvalidLimit", err)
	}
	s := sluice.State{T: 7, A: 3}
	if got, st, err := ok.Decide(s, 0, -1); !errors.Is(err, sluice.ErrInvalidCheck) || !equalState(got, s) || st != (sluice.Status{}) {
		t.Errorf("negative cost: %+v %+v %v, want the state back, a zero Status and ErrInvalidCheck", got, st, err)
	}
	for _, tc := range []struct {
		name   string
		checks []sluice.Check
		states int
		out    int
	}{
		{"zero limit", []sluice.Check{{Key: "k", Limit: ok, Cost: 1}, {Key: "k"}}, 2, 2},
		{"negative cost", []sluice.Check{{Key: "k", Limit: ok, Cost: 1}, {Key: "k", Limit: ok.Named("b"), Cost: -1}}, 2, 2},
		{"short states", []sluice.Check{{Key: "k", Limit: ok, Cost: 1}}, 0, 1},
		{"short out", []sluice.Check{{Key: "k", Limit: ok, Cost: 1}}, 1, 0},
	} {
		states := make([]sluice.State, tc.states)
		out := make([]sluice.Status, tc.out)
		changed, err := sluice.DecideBatch(tc.checks, states, 1e6, out)
		if !errors.Is(err, sluice.ErrInvalidCheck) || changed {
			t.Errorf("%s: changed %v, %v; want ErrInvalidCheck", tc.name, changed, err)
		}
		for i := range states {
			if !equalState(states[i], sluice.State{}) {
				t.Errorf("%s: state %d written: %+v", tc.name, i, states[i])
			}
		}
		for i := range out {
			if out[i] != (sluice.Status{}) {
				t.Errorf("%s: status %d written: %+v", tc.name, i, out[i])
			}
		}
	}
}
