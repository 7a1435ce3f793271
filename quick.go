package sluice

import "time"

// quickKind says which of the quick admissions a limit has, if any.
type quickKind uint8

const (
	quickNone  quickKind = iota // AdmitGCRA and AdmitLevel decline: use AdmitOne
	quickGCRA                   // GCRA whose unit refills in whole µs
	quickLevel                  // token bucket or leaky-bucket meter whose unit refills in whole µs
)

// quickKindOf returns the quickKind of a valid bucket limit: one when its
// rate is a whole number of µs per unit (rq == 1: the quantity divides the
// window, as in 100 per second or 60 per minute) and it has no queue, so
// that a tick is a µs and no remainder is ever carried.
func quickKindOf(alg Algorithm, rq, maxWait int64) quickKind {
	switch {
	case rq != 1 || maxWait != 0:
		return quickNone
	case alg == AlgorithmGCRA:
		return quickGCRA
	default:
		return quickLevel
	}
}

// AdmitGCRA and AdmitLevel are AdmitOne, in three parts small enough for
// the Go compiler to inline into a store's decision path, for the limits
// most plans use: a bucket limit whose quantity divides its window (10 per
// second, 100 per minute: a unit refills in whole µs) and that has no
// queue. AdmitGCRA is that for GCRA, AdmitLevel for the token bucket and
// the leaky-bucket meter; each declines every other limit.
//
// Where one answers, it updates t and w (the state's two words, as for
// AdmitOne) as AdmitOne would, and returns the reset in µs that AdmitOne
// would (which is also the debt left after the call, in µs) and true; then
// call Admitted for the Status. Otherwise it returns 0 and false having
// written nothing: where AdmitOne would decline, for another limit, and,
// for the token and leaky buckets, for a state later than now (a clock
// that stepped back) or a now more than 2^61 µs (73,000 years) from Epoch.
// Call AdmitOne then. now is in µs since Epoch.
//
// A call on that path costs more than its instructions: BENCHMARKS.md
// ("Where the time goes") measures the work after a store reads a state
// delaying the next decision's cache misses. TestPropertyQuickIsAdmitOne
// holds the three to AdmitOne.
func (l *Limit) AdmitGCRA(t, w *int64, now, cost int64) (resetUS int64, ok bool) {
	if l.quick != quickGCRA || uint64(cost-1) >= uint64(l.b) { // cost in [1, b]
		return 0, false
	}
	// The debt is the TAT ahead of now, in µs (past any admissible debt
	// when far ahead: refused below).
	now = clampTime(now)
	var after int64
	if last := *t; *w > 0 && last > now {
		after = min(last, maxTime) - now
	}
	// Refused past b·rw = horizon-1 ticks (quickKindOf: rq is 1, no queue).
	if after += cost * l.rw; after >= l.horizon { // ≤ 2^62 + 2^53: no overflow
		return 0, false
	}
	*t, *w = now+after, 1
	return after, true
}

// AdmitLevel is AdmitGCRA for the token bucket and the leaky-bucket meter.
func (l *Limit) AdmitLevel(t, w *int64, now, cost int64) (resetUS int64, ok bool) {
	if l.quick != quickLevel || uint64(cost-1) >= uint64(l.b) || now > maxTime {
		return 0, false
	}
	// The debt is the level's, less what refilled since it was set. (A now
	// before minTime, where Decide would clamp it, declines here too.)
	last := max(*t, minTime)
	if last > now {
		return 0, false
	}
	after := max(min(max(*w, 0), l.horizon-1)-(now-last), 0) + cost*l.rw
	if after >= l.horizon {
		return 0, false
	}
	*t, *w = now, after
	return after, true
}

// Admitted writes into st the Status of a call that AdmitGCRA or AdmitLevel
// admitted with l, from the reset they returned.
func (l *Limit) Admitted(st *Status, resetUS int64) {
	st.Allowed, st.Remaining, st.Lease = true, l.units(l.horizon-1-resetUS), 0
	st.ResetAfter, st.RetryAfter, st.Delay = time.Duration(resetUS)*time.Microsecond, 0, 0
}
