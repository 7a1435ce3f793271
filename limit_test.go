package sluice_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// Every algorithm accepts windows up to MaxWindow; a fixed window up to
// MaxFixedWindow. One microsecond more is an invalid limit that names the
// bound.
func TestLimitWindowBounds(t *testing.T) {
	if sluice.MaxFixedWindow != time.Duration(1<<46)*time.Microsecond || sluice.MaxWindow != time.Duration(1<<45)*time.Microsecond {
		t.Fatalf("MaxWindow %v, MaxFixedWindow %v: not 2^45 and 2^46 µs", sluice.MaxWindow, sluice.MaxFixedWindow)
	}
	for _, alg := range sluice.Algorithms() {
		longest := sluice.MaxWindow
		if alg == sluice.AlgorithmFixedWindow {
			longest = sluice.MaxFixedWindow
		}
		for _, c := range []struct {
			window time.Duration
			valid  bool
		}{
			{time.Microsecond, true},
			{sluice.MaxWindow, true},
			{longest, true},
			{longest + time.Microsecond, false},
			{sluice.MaxFixedWindow + time.Microsecond, false},
		} {
			err := sluice.NewLimit(alg, 1, c.window).Err()
			switch {
			case c.valid && err != nil:
				t.Errorf("%v over %v: %v", alg, c.window, err)
			case !c.valid && !errors.Is(err, sluice.ErrInvalidLimit):
				t.Errorf("%v over %v: err %v, want ErrInvalidLimit", alg, c.window, err)
			case !c.valid && !strings.Contains(err.Error(), longest.String()):
				t.Errorf("%v over %v: %q does not name the bound %v", alg, c.window, err, longest)
			}
		}
	}
}

// A fixed window of MaxFixedWindow counts from its start, aligned to
// Epoch, to its end: the last microsecond of a window still refuses, the
// first of the next admits, and Reset and RetryAfter run to the end.
func TestLongestFixedWindowEndsOnTime(t *testing.T) {
	l := sluice.FixedWindow(2, sluice.MaxFixedWindow)
	w := sluice.MaxFixedWindow
	start := 3 * int64(w/time.Microsecond) // µs since Epoch: a window's start
	var s sluice.State
	for i, c := range []struct {
		at      time.Duration // after start
		allowed bool
		remain  int64
		wait    time.Duration // RetryAfter if refused, else ResetAfter
	}{
		{w / 4, true, 1, w - w/4},
		{w - time.Second, true, 0, time.Second},
		{w - time.Microsecond, false, 0, time.Microsecond},
		{w, true, 1, w},
		{w + w - time.Microsecond, true, 0, time.Microsecond},
	} {
		var st sluice.Status
		s, st = storetest.Decided(l.Decide(s, start+int64(c.at/time.Microsecond), 1))
		wait := st.ResetAfter
		if !st.Allowed {
			wait = st.RetryAfter
		}
		if st.Allowed != c.allowed || st.Remaining != c.remain || wait != c.wait {
			t.Errorf("step %d at start+%v: allowed %v remaining %d wait %v, want %v %d %v",
				i, c.at, st.Allowed, st.Remaining, wait, c.allowed, c.remain, c.wait)
		}
	}
}
