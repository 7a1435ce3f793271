package client

import (
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// history counts the units a host's attempts were answered for (or failed,
// or were written off), by when, so that the window of a policy first
// stated after them counts those the server may still count (see
// keepWindow): a unit answered less than w before it stays in the window
// until w after its answer, as it would have had the window been kept
// from the start.
//
// It is an exponential histogram: runs of answers, each of a power of two
// of them, at most two runs of each size, dated by the latest answer they
// hold. A run counts every unit it holds as answered at its date, which is
// never earlier than the units' answers: a unit leaves a window seeded
// from it late, never early. Runs of a host of n answers number at most
// 2·log₂(n) + 2, whatever n.
type history struct{ runs []answeredRun }

// answeredRun is n answers, of units units together, the latest at at.
type answeredRun struct {
	n, units int64
	at       time.Time
}

// add counts units answered at at.
func (h *history) add(units int64, at time.Time) {
	if units <= 0 {
		return
	}
	h.runs = append(h.runs, answeredRun{n: 1, units: units, at: at})
	// Runs go from the oldest, and largest, to the newest: while three
	// are of one size, the two oldest of them become one of twice it.
	for i := len(h.runs) - 1; i >= 2; i-- {
		if h.runs[i-2].n != h.runs[i].n {
			continue
		}
		a, b := h.runs[i-2], h.runs[i-1]
		h.runs[i-2] = answeredRun{n: algo.AddSat(a.n, b.n), units: algo.AddSat(a.units, b.units), at: later(a.at, b.at)}
		h.runs = append(h.runs[:i-1], h.runs[i:]...)
		i = len(h.runs) // a run of the next size may now be a third
	}
}

// seed counts in w, a window that begins counting at since, the units
// answered less than its w before since.
func (h *history) seed(w *window, since time.Time) {
	from := since.Add(-w.w)
	for _, r := range h.runs {
		if r.at.After(from) {
			w.add(r.units, r.at)
		}
	}
}
