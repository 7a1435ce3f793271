package reliability

import (
	"container/heap"
	"sort"
	"time"

	"github.com/sluice-dev/sluice"
)

// admission is one admitted call as a client saw it.
type admission struct {
	instance  int
	sent, got time.Time     // the call's start and return
	reset     time.Duration // the limit's ResetAfter: from the decision to its window's end
	remaining int64         // the limit's Remaining
	local     bool          // decided locally
	window    time.Time     // the start of the window assign counted it in
}

// windowsOf returns the indices of the windows of length w µs (aligned to
// sluice.Epoch: window j is [j·w, (j+1)·w)) that may have counted a: those
// whose end is within [sent + reset, got + reset], the decision having
// been made between sent and got. When none is (it cannot be, but for a
// clock that jumped), the window whose end is nearest to the middle.
func windowsOf(a *admission, w int64) (lo, hi int64) {
	sent := sluice.MicrosSinceEpoch(a.sent)
	got := sluice.MicrosSinceEpoch(a.got) + 1 // the µs is truncated
	r := int64(a.reset / time.Microsecond)
	lo, hi = ceilDiv(sent+r, w)-1, floorDiv(got+r, w)-1
	if lo > hi {
		mid := (sent+got)/2 + r
		lo = floorDiv(mid+w/2, w) - 1
		hi = lo
	}
	return lo, hi
}

// assign counts each admission in one of its windows (windowsOf): an
// admission with one possible window in it, an ambiguous one where the
// windows stay within the limit's Quantity if any assignment keeps them
// so. It is earliest-deadline-first: window by window, the admissions
// that may be counted there go in by the last window they may be counted
// in, up to Quantity; one whose last window is full is over the promise
// whatever the assignment (at most Quantity per window fits, and EDF fits
// the most admissions a windowed assignment can). It sets each
// admission's window and returns the windows in order, the number of
// ambiguous admissions and the number over the promise (counted in their
// last window).
func assign(as []admission, limit sluice.Limit) (windows []Window, ambiguous, over int64) {
	w := int64(limit.Window() / time.Microsecond)
	q := limit.Quantity()
	type span struct {
		lo, hi int64
		i      int
	}
	spans := make([]span, len(as))
	for i := range as {
		lo, hi := windowsOf(&as[i], w)
		spans[i] = span{lo, hi, i}
		if hi > lo {
			ambiguous++
		}
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].lo < spans[b].lo })
	count := make(map[int64]*Window)
	put := func(i int, j int64) {
		win := count[j]
		if win == nil {
			win = &Window{Start: sluice.Epoch.Add(time.Duration(j*w) * time.Microsecond)}
			count[j] = win
		}
		win.Admitted++
		if as[i].local {
			win.Local++
		}
		as[i].window = win.Start
	}
	var open deadlines
	next, j := 0, int64(0)
	for next < len(spans) || open.Len() > 0 {
		if open.Len() == 0 {
			j = spans[next].lo // the next window with an admission
		}
		for next < len(spans) && spans[next].lo <= j {
			heap.Push(&open, deadline{hi: spans[next].hi, i: spans[next].i})
			next++
		}
		for n := int64(0); open.Len() > 0; n++ {
			if n >= q && open[0].hi > j {
				break // window j is full; the rest may go in a later one
			}
			d := heap.Pop(&open).(deadline)
			if n >= q {
				over++ // its last window is full
			}
			put(d.i, j)
		}
		j++
	}
	for _, win := range count {
		windows = append(windows, *win)
	}
	sort.Slice(windows, func(a, b int) bool { return windows[a].Start.Before(windows[b].Start) })
	return windows, ambiguous, over
}

// deadline is admission i waiting for a window: it may be counted in
// windows up to hi.
type deadline struct {
	hi int64
	i  int
}

// deadlines is a min-heap of deadlines by hi.
type deadlines []deadline

func (h deadlines) Len() int           { return len(h) }
func (h deadlines) Less(a, b int) bool { return h[a].hi < h[b].hi }
func (h deadlines) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *deadlines) Push(x any)        { *h = append(*h, x.(deadline)) }
func (h *deadlines) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }
