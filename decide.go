package sluice

import (
	"fmt"

	"github.com/sluice-dev/sluice/internal/algo"
)

// State is one key's stored state under one Limit. The zero State is a key
// never seen: full quota. Its fields mean different things per algorithm
// and are exported so that stores (and the simulator) can keep them; treat
// them as opaque and let Decide or DecideBatch interpret them. Both accept
// any State, including one written under different parameters of the same
// algorithm: out-of-range values are clamped, never trusted to create
// capacity.
type State struct {
	// T is a time in µs since Epoch: a fixed window's last charge (its
	// Status.Charged; in a state of an earlier version, its window's
	// start), whose window the count belongs to; a sliding counter's
	// window start; or a bucket's theoretical arrival time, when it is
	// full again (token bucket, leaky bucket, GCRA).
	T int64
	// A is a count of units (fixed window, sliding counter's current
	// window). A token or leaky bucket state that earlier versions wrote
	// has B = 0 and keeps in A the ticks missing from a full bucket at T,
	// its last update.
	A int64
	// B is the sliding counter's previous-window count, or a bucket's
	// arrival time fraction in ticks plus one (zero: never written). A
	// bucket's debt is thus a time, which keeps its meaning under other
	// parameters of the same limit: the refill time it takes.
	B int64
	// Log lists the sliding window log's admissions (and a concurrency
	// limit's leases), oldest first.
	Log []LogEntry
}

// LogEntry is one admission in a sliding window log: Units (the cost
// admitted) at At, in µs since Epoch.
type LogEntry = algo.Entry

// Decide is the pure core of every algorithm: it returns the state after
// spending cost units of l at time now (µs since Epoch) from state s, and the
// Status of that check. A refused check returns s unchanged; so does cost 0,
// which is always allowed and reports the current state. A cost above
// l.Burst() is refused with RetryAfter Never. Times are clamped to about
// ±73,000 years around Epoch; a now earlier than the state's own latest time
// counts as that latest time (or, for the bucket family, as time not yet
// elapsed), so a clock stepping back never creates capacity.
//
// For AlgorithmSlidingLog the returned Log may share s.Log's backing array;
// Decide never modifies s.Log's elements, so s stays valid for reading, but
// only one of the two may be appended to afterwards.
//
// Decide decides nothing, returning s, a zero Status and an error, for an
// invalid Limit — the zero Limit included — (the error wraps ErrInvalidCheck
// and ErrInvalidLimit) and for a negative cost (it wraps ErrInvalidCheck).
func (l Limit) Decide(s State, now, cost int64) (State, Status, error) {
	if err := l.decidable(cost); err != nil {
		return s, Status{}, err
	}
	var v algo.Verdict
	l.decide(&s, now, cost, &v)
	var st Status
	writeStatus(&v, &st)
	return s, st, nil
}

// decidable reports why a check of cost units of l cannot be decided, or
// nil.
func (l *Limit) decidable(cost int64) error {
	switch {
	case l.p.RW == 0: // an invalid Limit, or the zero one
		return fmt.Errorf("%w: %w", ErrInvalidCheck, l.Err())
	case cost < 0:
		return fmt.Errorf("%w: negative cost %d", ErrInvalidCheck, cost)
	}
	return nil
}

// decide is Decide in place, for a Limit and cost that decidable accepts:
// it writes the verdict to *v and, when the check is admitted with a cost,
// the next state to *s, and reports whether it did.
func (l *Limit) decide(s *State, now, cost int64, v *algo.Verdict) bool {
	return algo.Decide(&l.p, (*algo.State)(s), now, cost, v)
}

// writeStatus fills *st from v.
func writeStatus(v *algo.Verdict, st *Status) {
	*st = Status{
		Allowed:    v.Allowed,
		Remaining:  v.Remaining,
		ResetAfter: durationFromMicros(v.Reset),
		Delay:      durationFromMicros(v.Delay),
		Lease:      v.Lease,
		Charged:    v.Charged,
	}
	if !v.Allowed {
		st.RetryAfter = durationFromMicros(v.Retry)
		if v.Retry >= algo.MaxTime {
			st.RetryAfter = Never
		}
	}
}

// Release returns the state after giving back the concurrency lease of units
// stamped at (Status.Lease): it removes one matching entry, if any is left
// (an expired lease has already gone). The returned Log never shares
// storage with s.Log. For other algorithms it returns s unchanged.
func (l Limit) Release(s State, at, units int64) State {
	return State(algo.Release(&l.p, algo.State(s), at, units))
}
