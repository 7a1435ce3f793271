package failover

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// The memo keeps what the primary said of a key in the order the primary
// decided it, not in the order the answers arrived: the late answer of an
// earlier decision, which says more is left than the primary has, never
// replaces a later one (a fallback starting from it would admit again what
// the later decision counted). Only an answer known to be later says more
// is left: one timed earlier may have been decided by another server whose
// clock is behind (a failover), and is of unknown order.
func TestTheMemoKeepsAnswersInTheOrderThePrimaryDecidedThem(t *testing.T) {
	c := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(100, time.Hour), Cost: 1}}
	t0 := time.Unix(1_000_000, 0)
	answer := func(remaining int64) []sluice.Status {
		return []sluice.Status{{Allowed: true, Remaining: remaining, ResetAfter: time.Hour}}
	}
	left := func(m *memo) int64 {
		t.Helper()
		w, ok := m.start(&c[0], t0.Add(time.Minute))
		if !ok {
			t.Fatal("no word kept")
		}
		return w.remaining
	}
	for _, tc := range []struct {
		name string
		put  func(m *memo)
		want int64
	}{
		{"decided later, answered first", func(m *memo) {
			m.put(c, answer(49), []int64{200}, time.Time{}, t0.Add(time.Second))
			m.put(c, answer(50), []int64{100}, time.Time{}, t0.Add(2*time.Second))
		}, 49},
		{"decided later, more left (a give-back)", func(m *memo) {
			m.put(c, answer(40), []int64{100}, time.Time{}, t0.Add(time.Second))
			m.put(c, answer(60), []int64{200}, time.Time{}, t0.Add(2*time.Second))
		}, 60},
		{"timed earlier, less left (a server whose clock is behind): the lower is kept", func(m *memo) {
			m.put(c, answer(50), []int64{200}, time.Time{}, t0.Add(time.Second))
			m.put(c, answer(40), []int64{100}, time.Time{}, t0.Add(2*time.Second))
		}, 40},
		{"order unknown: the lower is kept", func(m *memo) {
			m.put(c, answer(49), nil, t0, t0.Add(time.Second))
			m.put(c, answer(50), []int64{100}, time.Time{}, t0.Add(2*time.Second))
		}, 49},
		{"both calls in flight at once: the lower is kept", func(m *memo) {
			m.put(c, answer(49), nil, t0, t0.Add(time.Second))
			m.put(c, answer(50), nil, t0, t0.Add(2*time.Second))
		}, 49},
		{"sent after the last answer arrived: decided after it", func(m *memo) {
			m.put(c, answer(40), []int64{100}, time.Time{}, t0.Add(time.Second))
			m.put(c, answer(60), nil, t0.Add(time.Second), t0.Add(2*time.Second))
		}, 60},
		{"a full answer decided earlier removes nothing", func(m *memo) {
			m.put(c, answer(49), []int64{200}, time.Time{}, t0.Add(time.Second))
			m.put(c, []sluice.Status{{Allowed: true, Remaining: 100}}, []int64{100}, time.Time{}, t0.Add(2*time.Second))
		}, 49},
	} {
		m := newMemo(0)
		tc.put(m)
		if got := left(m); got != tc.want {
			t.Errorf("%s: the memo kept %d left, want %d", tc.name, got, tc.want)
		}
	}
}

// A word that no longer holds (its window is over) is replaced by any
// answer, whatever it leaves.
func TestTheMemoReplacesAWordThatNoLongerHolds(t *testing.T) {
	c := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(100, time.Hour), Cost: 1}}
	t0 := time.Unix(1_000_000, 0)
	m := newMemo(0)
	m.put(c, []sluice.Status{{Allowed: true, Remaining: 3, ResetAfter: time.Second}}, nil, t0, t0)
	next := t0.Add(2 * time.Second)
	m.put(c, []sluice.Status{{Allowed: true, Remaining: 99, ResetAfter: time.Hour}}, nil, t0, next)
	if w, ok := m.start(&c[0], next); !ok || w.remaining != 99 {
		t.Errorf("kept %+v (%v), want the new window's 99", w, ok)
	}
}

// A word said of other parameters of the limit (a reload, the same state)
// is ordered as any other: an answer known to be later replaces it, and
// one of unknown order only if it leaves no more, the two read under the
// answer's limit. Redis last said 10 were left of 80 (70 used).
func TestTheMemoOrdersAnswersAcrossAReload(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	before := sluice.Check{Key: "k", Limit: sluice.FixedWindow(100, time.Hour).Named("x"), Cost: 1}
	reloaded := sluice.Check{Key: "k", Limit: sluice.FixedWindow(80, time.Hour).Named("x"), Cost: 1}
	answer := func(remaining int64) []sluice.Status {
		return []sluice.Status{{Allowed: true, Remaining: remaining, ResetAfter: time.Hour}}
	}
	for _, tc := range []struct {
		name string
		put  func(m *memo)
		want int64 // left of the reloaded limit
	}{
		{"decided earlier under the old limit, more left (50 used): kept", func(m *memo) {
			m.put([]sluice.Check{before}, answer(50), []int64{100}, time.Time{}, t0.Add(2*time.Second))
		}, 10},
		{"of unknown order under the old limit, less left (75 used): replaces", func(m *memo) {
			m.put([]sluice.Check{before}, answer(25), []int64{100}, time.Time{}, t0.Add(2*time.Second))
		}, 5},
		{"sent once the word arrived, more left (50 used): replaces", func(m *memo) {
			m.put([]sluice.Check{before}, answer(50), nil, t0.Add(time.Second), t0.Add(2*time.Second))
		}, 30},
	} {
		m := newMemo(0)
		m.put([]sluice.Check{reloaded}, answer(10), []int64{200}, time.Time{}, t0.Add(time.Second))
		tc.put(m)
		w, ok := m.start(&reloaded, t0.Add(time.Minute))
		if !ok {
			t.Fatalf("%s: no word kept", tc.name)
		}
		if w.remaining != tc.want {
			t.Errorf("%s: the memo kept %d left of 80, want %d", tc.name, w.remaining, tc.want)
		}
	}
}
