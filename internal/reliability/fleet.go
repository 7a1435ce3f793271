package reliability

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// witnessQuantity is the witness limit's quantity: out of reach, so that
// its remaining count says who decided (see Fleet).
const witnessQuantity = 1_000_000_000

// A Fleet is several instances of a service sharing one fixed-window limit
// through their stores, each with one client per key asking for one unit at
// a steady pace, faster than the limit admits. From the outside it counts
// the units admitted per key and per aligned window of the limit — the
// promise is Quantity per window — and which decisions each instance made
// locally.
//
// Which window counted an admission is read from the decision itself: it
// was made at an instant between the call's start and its return, and its
// ResetAfter runs from that instant to the end of the window that counted
// it, so that end is a window boundary within [start + ResetAfter, return
// + ResetAfter]. Most calls leave one boundary there; a call slow enough
// to leave two is ambiguous, and Stop assigns it to one of its windows so
// that as few units as possible exceed the promise (see Seen).
//
// Each call also carries a witness check on the same key (a fixed window
// of 10⁹ per hour, never reached): the shared store counts it down from 10⁹,
// an instance deciding locally from at most its share 10⁹/instances, so its
// remaining count tells the decisions apart.
type Fleet struct {
	limit   sluice.Limit
	witness sluice.Limit
	share   int64 // the witness's remaining at most, when local
	stop    chan struct{}
	wg      sync.WaitGroup

	mu       sync.Mutex
	admitted map[string][]admission // per key, in the order recorded
	calls    int64
	errs     []string
	nerr     int64
	slow     time.Duration
	last     atomic.Int64 // Unix ns of the last local decision
}

// Window is what one key's clients saw admitted in one window.
type Window struct {
	// Start is the window's start.
	Start time.Time
	// Admitted and Local count the units admitted, and those admitted by a
	// local decision.
	Admitted, Local int64
}

// StartFleet starts a client per key on each store, every one deciding
// {key, limit, 1} plus the witness, then pausing every. limit must be a
// fixed window.
func StartFleet(stores []sluice.Store, keys []string, limit sluice.Limit, every time.Duration) *Fleet {
	f := &Fleet{
		limit:    limit,
		witness:  sluice.FixedWindow(witnessQuantity, time.Hour).Named("witness"),
		share:    witnessQuantity / int64(len(stores)),
		stop:     make(chan struct{}),
		admitted: make(map[string][]admission),
	}
	for i, st := range stores {
		lim := sluice.NewLimiter(st)
		for _, k := range keys {
			f.wg.Go(func() { f.client(i, lim, k, every) })
		}
	}
	return f
}

func (f *Fleet) client(instance int, lim *sluice.Limiter, key string, every time.Duration) {
	checks := []sluice.Check{{Key: key, Limit: f.limit, Cost: 1}, {Key: key, Limit: f.witness, Cost: 1}}
	var d sluice.Decision
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		sent := time.Now()
		err := lim.Allow(context.Background(), checks, &d)
		got := time.Now()
		f.record(instance, key, &d, err, sent, got)
	}
}

// record counts one call's outcome.
func (f *Fleet) record(instance int, key string, d *sluice.Decision, err error, sent, got time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.slow = max(f.slow, got.Sub(sent))
	if err != nil {
		f.nerr++
		if len(f.errs) < 5 {
			f.errs = append(f.errs, err.Error())
		}
		return
	}
	if !d.Allowed {
		return // a refusal may be the over-limit cache's, which says nothing of who decided
	}
	local := d.Statuses[1].Remaining <= f.share
	if local {
		f.last.Store(got.UnixNano())
	}
	f.admitted[key] = append(f.admitted[key], admission{instance: instance, sent: sent, got: got,
		reset: d.Statuses[0].ResetAfter, remaining: d.Statuses[0].Remaining, local: local})
}

// LastLocal returns when a client was last admitted by a local decision
// (zero: never).
func (f *Fleet) LastLocal() time.Time {
	if ns := f.last.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// WaitRedis waits up to timeout for quiet without a local admission and
// reports whether it came.
func (f *Fleet) WaitRedis(quiet, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if time.Since(f.LastLocal()) > quiet {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// Stop stops the clients and returns what they saw.
func (f *Fleet) Stop() *Seen {
	close(f.stop)
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &Seen{Promise: f.limit.Quantity(), Calls: f.calls, Errors: f.nerr, Errs: f.errs, Slowest: f.slow,
		Windows: make(map[string][]Window), admitted: f.admitted}
	for k, as := range f.admitted {
		var ambiguous, over int64
		s.Windows[k], ambiguous, over = assign(as, f.limit)
		s.Ambiguous += ambiguous
		s.Over += over
	}
	return s
}

// Seen is what a Fleet's clients saw.
type Seen struct {
	// Promise is the limit's Quantity: the most units per window.
	Promise int64
	// Calls counts decisions and errors; Errors the errors, Errs the first
	// few of them.
	Calls, Errors int64
	Errs          []string
	// Slowest is the longest call.
	Slowest time.Duration
	// Windows holds each key's windows in order, each admission counted in
	// the window its decision names (see Fleet), an ambiguous one where it
	// keeps the most units within the promise.
	Windows map[string][]Window
	// Ambiguous counts the admissions whose call was slow enough to leave
	// two windows possible. Over counts the admissions that no assignment
	// of the ambiguous ones keeps within the promise: the fewest units the
	// fleet can have admitted beyond it, all windows together (0 when
	// every window may have kept it). Both are over the whole run.
	Ambiguous, Over int64

	admitted map[string][]admission
}

// Worst returns the window with the most units admitted among keys (every
// key when none) whose start is in [from, to) (zero times: unbounded).
func (s *Seen) Worst(from, to time.Time, keys ...string) (key string, w Window) {
	if len(keys) == 0 {
		for k := range s.Windows {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	for _, k := range keys {
		for _, win := range s.Windows[k] {
			if !from.IsZero() && win.Start.Before(from) || !to.IsZero() && !win.Start.Before(to) {
				continue
			}
			if win.Admitted > w.Admitted {
				key, w = k, win
			}
		}
	}
	return key, w
}

// Local returns the units admitted locally on key.
func (s *Seen) Local(key string) int64 {
	var n int64
	for _, w := range s.Windows[key] {
		n += w.Local
	}
	return n
}

// Table renders each key's windows from from on, for a test log: start
// (ms after from), admitted, local.
func (s *Seen) Table(from time.Time) string {
	var b strings.Builder
	keys := make([]string, 0, len(s.Windows))
	for k := range s.Windows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s:", k)
		for _, w := range s.Windows[k] {
			if w.Start.Before(from.Add(-time.Second)) {
				continue
			}
			fmt.Fprintf(&b, " [%+d ms %d", w.Start.Sub(from).Milliseconds(), w.Admitted)
			if w.Local > 0 {
				fmt.Fprintf(&b, " (%d local)", w.Local)
			}
			b.WriteString("]")
		}
	}
	return b.String()
}

// Timeline renders the admissions that Windows counts in key's window
// starting at start, for a test log: the instance, L (local) or P (the
// primary), the call's start and return in ms after start, and the
// remaining count the decision gave.
func (s *Seen) Timeline(key string, start time.Time) string {
	var b strings.Builder
	for _, a := range s.admitted[key] {
		if !a.window.Equal(start) {
			continue
		}
		src := "P"
		if a.local {
			src = "L"
		}
		fmt.Fprintf(&b, " %d%s@%d..%d(r%d)", a.instance, src, a.sent.Sub(start).Milliseconds(),
			a.got.Sub(start).Milliseconds(), a.remaining)
	}
	return b.String()
}
