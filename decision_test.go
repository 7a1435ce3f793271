package sluice

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Decision.decide picks the deciding limit by its documented rule: when
// refused, the first violated enforcing limit with the longest RetryAfter;
// when admitted, the first enforcing limit with the least Remaining (ties:
// the longest ResetAfter); with only shadow limits, the first.
func TestPropertyDecisionPicksTheDecidingLimit(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(rt, "n")
		checks := make([]Check, n)
		statuses := make([]Status, n)
		for i := range checks {
			shadow := rapid.Bool().Draw(rt, "shadow")
			checks[i] = Check{Key: "k", Limit: GCRA(10, time.Second).Named(fmt.Sprintf("l%d", i)).WithShadow(shadow), Cost: 1}
			statuses[i] = Status{
				Allowed:    rapid.Bool().Draw(rt, "allowed"),
				Remaining:  rapid.Int64Range(0, 3).Draw(rt, "remaining"),
				ResetAfter: time.Duration(rapid.Int64Range(0, 3).Draw(rt, "reset")),
				RetryAfter: time.Duration(rapid.Int64Range(0, 3).Draw(rt, "retry")),
				Delay:      time.Duration(rapid.Int64Range(0, 3).Draw(rt, "delay")),
			}
		}
		var d Decision
		d.decide(checks, statuses)

		allowed, want, delay := true, -1, time.Duration(0)
		var violated []string
		for i, st := range statuses {
			if !checks[i].Limit.Shadow() {
				delay = max(delay, st.Delay)
			}
			if !checks[i].Limit.Shadow() && !st.Allowed {
				allowed = false
				violated = append(violated, checks[i].Limit.Name())
			}
		}
		for i, st := range statuses {
			if checks[i].Limit.Shadow() || !allowed && st.Allowed {
				continue
			}
			switch {
			case want < 0:
				want = i
			case !allowed:
				if st.RetryAfter > statuses[want].RetryAfter {
					want = i
				}
			case st.Remaining < statuses[want].Remaining ||
				st.Remaining == statuses[want].Remaining && st.ResetAfter > statuses[want].ResetAfter:
				want = i
			}
		}
		if want < 0 {
			want = 0
		}
		if d.Allowed != allowed || d.Delay != delay || fmt.Sprint(d.Violated) != fmt.Sprint(violated) {
			rt.Fatalf("allowed %v delay %v violated %v, want %v %v %v", d.Allowed, d.Delay, d.Violated, allowed, delay, violated)
		}
		if d.Limit != checks[want].Limit || d.Remaining != statuses[want].Remaining || d.ResetAfter != statuses[want].ResetAfter {
			rt.Fatalf("decided by %v, want %v", d.Limit.Name(), checks[want].Limit.Name())
		}
		if wantRetry := statuses[want].RetryAfter; allowed && d.RetryAfter != 0 || !allowed && d.RetryAfter != wantRetry {
			rt.Fatalf("RetryAfter %v, want %v", d.RetryAfter, wantRetry)
		}
	})
}
