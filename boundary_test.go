package sluice_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
)

const sec = int64(time.Second / time.Microsecond)

// at runs a check of cost at time t (µs) on state s, and returns the new state.
func step(t *testing.T, l sluice.Limit, s *sluice.State, now, cost int64) sluice.Status {
	t.Helper()
	next, st := storetest.Decided(l.Decide(*s, now, cost))
	*s = next
	return st
}

func TestTokenBucketWorkedExample(t *testing.T) {
	// DESIGN/issue: a token bucket of size 10 refilled at 5/s.
	l := sluice.TokenBucket(5, time.Second).WithBurst(10)
	var s sluice.State
	t0 := 1000 * sec
	if st := step(t, l, &s, t0, 8); !st.Allowed || st.Remaining != 2 {
		t.Fatalf("8 at t=0: got %+v, want allowed with 2 left", st)
	}
	peeks := []struct {
		name string
		at   int64
		want int64
	}{
		{"0.2 s refills one token", t0 + sec/5, 3},
		{"0.5 s holds 4.5 tokens, reported floored", t0 + sec/2, 4},
		{"1.0 s refills five", t0 + sec, 7},
		{"1.6 s fills the bucket", t0 + 16*sec/10, 10},
		{"later stays full", t0 + 10*sec, 10},
	}
	for _, p := range peeks {
		st := step(t, l, &s, p.at, 0)
		if !st.Allowed || st.Remaining != p.want {
			t.Errorf("%s: peek gives %+v, want remaining %d", p.name, st, p.want)
		}
	}
	// At 0.5 s a cost-5 request is refused: 4.5 tokens are not 5.
	s = sluice.State{}
	step(t, l, &s, t0, 8)
	st := step(t, l, &s, t0+sec/2, 5)
	if st.Allowed {
		t.Fatalf("cost 5 at 0.5 s admitted with 4.5 tokens: %+v", st)
	}
	if st.RetryAfter != 100*time.Millisecond {
		t.Errorf("retry after = %v, want 100ms (the missing half token at 5/s)", st.RetryAfter)
	}
	if st := step(t, l, &s, t0+sec/2+int64(st.RetryAfter/time.Microsecond), 5); !st.Allowed || st.Remaining != 0 {
		t.Errorf("retry at 0.6 s: %+v, want allowed with 0 left", st)
	}
}

func TestBoundaryBurst(t *testing.T) {
	// Limit 100/min; 100 requests at 00:50 and 100 at 01:10.
	minute := 60 * sec
	base := 1000 * minute // a window boundary
	cases := []struct {
		limit    sluice.Limit
		admitted int
	}{
		{sluice.FixedWindow(100, time.Minute), 200},
		{sluice.SlidingLog(100, time.Minute), 100},
		{sluice.SlidingCounter(100, time.Minute), 117},
	}
	for _, c := range cases {
		t.Run(c.limit.Algorithm().String(), func(t *testing.T) {
			var s sluice.State
			admitted := 0
			for _, at := range []int64{base + 50*sec, base + 70*sec} {
				for range 100 {
					if st := step(t, c.limit, &s, at, 1); st.Allowed {
						admitted++
					}
				}
			}
			if admitted != c.admitted {
				t.Errorf("admitted %d of 200, want %d", admitted, c.admitted)
			}
		})
	}
}
