package sluice

import "time"

// quickKind says which of AdmitQuick's two paths a limit takes, if any.
type quickKind uint8

const (
	quickNone  quickKind = iota // AdmitQuick declines: use AdmitOne
	quickGCRA                   // GCRA whose unit refills in whole µs
	quickLevel                  // token bucket or leaky-bucket meter whose unit refills in whole µs
)

// quickKindOf returns the quickKind of a valid bucket limit: a path when its
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

// AdmitQuick is AdmitOne for the limits most plans use — GCRA, token bucket
// and leaky-bucket meter whose unit refills in a whole number of µs
// (Quantity divides Window: 10 per second, 100 per minute) — written small
// enough for the Go compiler to inline into a store's decision path. Where
// it answers, it answers as AdmitOne (and so as Decide) does: same state,
// same Status, same reset in µs. It declines, writing nothing, wherever
// AdmitOne would, and also for other limits and for a token or leaky
// bucket whose state is later than now (a clock that stepped back): call
// AdmitOne then. now is in µs since Epoch.
//
// It exists because a call on that path costs more than its instructions:
// BENCHMARKS.md ("Where the time goes") measures the work after a store
// reads a state delaying the next decision's cache misses.
// TestPropertyAdmitQuickIsAdmitOne holds it to AdmitOne.
func (l *Limit) AdmitQuick(t, w *int64, now, cost int64, st *Status) (resetUS int64, ok bool) {
	if l.quick == quickNone || cost <= 0 || cost > l.b {
		return 0, false
	}
	now = clampTime(now)
	// missing is the debt at now in ticks, which are µs: a GCRA's TAT ahead
	// of now (past any admissible debt when far ahead: refused below), or a
	// level's debt less what refilled since it was set.
	var missing int64
	if last := min(*t, maxTime); l.quick == quickGCRA {
		if *w > 0 && last > now {
			missing = last - now
		}
	} else {
		if last > now {
			return 0, false
		}
		missing = max(min(max(*w, 0), l.b*l.rw)-(now-max(last, minTime)), 0)
	}
	capT := l.b * l.rw
	after := missing + cost*l.rw // ≤ 2^62 + 2^53: no overflow
	if after > capT {
		return 0, false
	}
	if l.quick == quickGCRA {
		*t, *w = now+after, 1
	} else {
		*t, *w = now, after
	}
	st.Allowed, st.Remaining, st.Lease = true, l.units(capT-after), 0
	st.ResetAfter, st.RetryAfter, st.Delay = time.Duration(after)*time.Microsecond, 0, 0
	return after, true
}
