package reliability

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

func TestAssignCountsEachAdmissionInAWindowItsCallAllows(t *testing.T) {
	limit := sluice.FixedWindow(2, time.Second)
	w0 := sluice.Epoch.Add(1000 * time.Second) // a window's start
	w1 := w0.Add(time.Second)
	// at is an admission decided at d, by a call that started before
	// earlier and returned after later, in the window that ends at end.
	at := func(d time.Time, before, after time.Duration) admission {
		end := d.Truncate(time.Second).Add(time.Second)
		return admission{sent: d.Add(-before), got: d.Add(after), reset: end.Sub(d)}
	}
	quick := func(d time.Time) admission { return at(d, time.Millisecond, time.Millisecond) }
	// slow started more than a second before it returned: a window boundary
	// lies on each side of its decision's instant, as the client sees it.
	slow := func(d time.Time) admission { return at(d, 1100*time.Millisecond, time.Millisecond) }
	for _, c := range []struct {
		name            string
		as              []admission
		counts          []int64 // per window from w0
		ambiguous, over int64
	}{
		{"quick calls are counted where their decisions say",
			[]admission{quick(w0.Add(10 * time.Millisecond)), quick(w0.Add(900 * time.Millisecond)), quick(w1.Add(time.Millisecond))},
			[]int64{2, 1}, 0, 0},
		{"a slow call goes where the promise holds: after a full window",
			[]admission{quick(w0), quick(w0.Add(time.Millisecond)), slow(w1.Add(50 * time.Millisecond)), quick(w1.Add(60 * time.Millisecond))},
			[]int64{2, 2}, 1, 0},
		{"a slow call goes where the promise holds: before a full window",
			[]admission{quick(w0), slow(w1.Add(50 * time.Millisecond)), quick(w1.Add(60 * time.Millisecond)), quick(w1.Add(70 * time.Millisecond))},
			[]int64{2, 2}, 1, 0},
		{"a third quick call in a window is over",
			[]admission{quick(w0), quick(w0.Add(time.Millisecond)), quick(w0.Add(2 * time.Millisecond))},
			[]int64{3}, 0, 1},
		{"a slow call between two full windows is over",
			[]admission{quick(w0), quick(w0.Add(time.Millisecond)), slow(w1.Add(50 * time.Millisecond)),
				quick(w1.Add(60 * time.Millisecond)), quick(w1.Add(70 * time.Millisecond))},
			[]int64{2, 3}, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			windows, ambiguous, over := assign(c.as, limit)
			var counts []int64
			for i, win := range windows {
				if want := w0.Add(time.Duration(i) * time.Second); !win.Start.Equal(want) {
					t.Fatalf("window %d starts at %v, want %v", i, win.Start, want)
				}
				counts = append(counts, win.Admitted)
			}
			if len(counts) != len(c.counts) || ambiguous != c.ambiguous || over != c.over {
				t.Fatalf("counts %v, %d ambiguous, %d over; want %v, %d, %d", counts, ambiguous, over, c.counts, c.ambiguous, c.over)
			}
			for i := range counts {
				if counts[i] != c.counts[i] {
					t.Errorf("counts %v, want %v", counts, c.counts)
				}
			}
		})
	}
}
