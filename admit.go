package sluice

// AdmitOne is Decide of one check, for the case a store meets on nearly
// every call: a bucket algorithm (token bucket, GCRA, or leaky bucket
// without a queue) admitting cost units, 1 ≤ cost ≤ Burst, at once. t and w
// are the state's two words: State.T, and State.B for GCRA or State.A for the
// token and leaky buckets (the other fields of their State are zero). In
// that case AdmitOne updates them as Decide would, writes the Status Decide
// would into st, and returns st.ResetAfter in µs (saturated at MaxInt64
// instead of at Never: when the state is back to a fresh one, as a store
// that forgets such states wants it) and true. In any other case (another
// algorithm, a queue, a peek, a cost above the burst, or a call Decide would
// refuse or delay) it returns 0 and false having written nothing: decide the
// call with Decide or DecideBatch. now is in µs since Epoch.
//
// AdmitOne spares a store Decide's generality on its common path: in the
// memory store it is about a third of a decision's instructions less than
// DecideBatch. TestPropertyAdmitOneIsDecide holds the two equal.
func (l *Limit) AdmitOne(t, w *int64, now, cost int64, st *Status) (resetUS int64, ok bool) {
	if !l.alg.bucket() || l.maxWait != 0 || cost <= 0 || cost > l.b {
		return 0, false
	}
	now = clampTime(now)
	var base, missing int64
	if l.alg == AlgorithmGCRA {
		base, missing = l.gcraLoad(*t, *w, now)
	} else {
		base, missing = l.levelLoad(*t, *w, now)
	}
	capT := l.b * l.rw
	after := missing + cost*l.rw // cost ≤ b: no overflow (see bucket)
	if after > capT {
		return 0, false // refused, or delayed past a max wait of 0: refused
	}
	var remaining int64
	if after < capT {
		remaining = l.units(capT - after)
	}
	us, rest := l.refillTime(after)
	full := us
	if rest != 0 {
		full++
	}
	if l.alg == AlgorithmGCRA {
		*t, *w = base+us, rest+1
	} else {
		*t, *w = base, after
	}
	reset := addSat(base-now, full)
	st.Allowed, st.Remaining, st.Lease = true, remaining, 0
	st.ResetAfter, st.RetryAfter, st.Delay = durationFromMicros(reset), 0, 0
	return reset, true
}
