package sluice

// The bucket family — token bucket, leaky bucket (meter and queue) and GCRA —
// shares one model: a bucket of capacity b units that refills (or drains) at
// q units per w µs. To keep fractional rates exact, amounts are counted in
// ticks: one unit is rw ticks and rq ticks refill per µs, where rq/rw is q/w
// in lowest terms. The algorithms differ only in how they store the bucket:
//
//   - token and leaky bucket: T = last update, A = ticks missing at T;
//   - GCRA: the theoretical arrival time TAT = T + (B-1)/rq µs; ticks
//     missing at now are (TAT-now)·rq. B holds the fraction plus one so that
//     B = 0 marks a key never written, whatever T is.
//
// A leaky-bucket queue lets the bucket overfill by up to maxWait·rq ticks and
// delays the check until the overfill has drained.

func (l *Limit) bucket(s *State, now, cost int64, v *verdict) bool {
	capT := l.b * l.rw              // ticks in a full bucket
	limitT := capT + l.maxWait*l.rq // deepest admissible debt (queue)
	base, missing := l.bucketLoad(s, now, limitT)

	// Outputs are measured from base (when the bucket was last seen, or now)
	// and reported relative to now.
	ahead := base - now
	view := func(m int64) {
		if m < capT {
			v.remaining = (capT - m) / l.rw
		}
		v.reset = addSat(ahead, ceilDiv(m, l.rq))
	}

	if cost == 0 || cost > l.b {
		*v = verdict{allowed: cost == 0}
		view(missing)
		if cost > l.b {
			v.retry = maxTime
		}
		return false
	}
	need := cost * l.rw // cost ≤ b, so need ≤ capT ≤ 2^53
	if missing > limitT-need {
		*v = verdict{retry: addSat(ahead, ceilDiv(missing-(limitT-need), l.rq))}
		view(missing)
		return false
	}
	after := missing + need
	var delay int64
	if after > capT {
		delay = ahead + ceilDiv(after-capT, l.rq)
		if delay > l.maxWait {
			// Only after a clock step back (ahead > 0): the wait from now
			// would pass MaxWait although the wait from base does not.
			*v = verdict{retry: delay - l.maxWait}
			view(missing)
			return false
		}
	}
	*v = verdict{allowed: true, delay: delay}
	view(after)
	l.bucketStore(s, base, after)
	return true
}

// bucketLoad returns the time base ≥ now the bucket is seen at and the ticks
// missing then, clamped to [0, limit] for states written under other
// parameters, except GCRA's debt after a clock step back, which may pass
// limit (by at most two units' worth of ticks).
func (l *Limit) bucketLoad(s *State, now, limitT int64) (base, missing int64) {
	last := clampTime(s.T)
	if l.alg == AlgorithmGCRA {
		if s.B <= 0 {
			return now, 0 // the zero State
		}
		frac := min(s.B-1, l.rq-1)
		if last < now || last == now && frac == 0 {
			return now, 0 // TAT passed
		}
		// Ticks missing now are (last-now)·rq + frac. When that is past any
		// admissible debt (a clock far behind TAT), see the bucket at the
		// later time base instead, where the debt is just past limit: both
		// refuse until then, and outputs measured from base stay exact
		// without overflowing.
		if k := limitT/l.rq + 1; last-now > k {
			return last - k, k*l.rq + frac
		}
		return now, (last-now)*l.rq + frac
	}
	missing = min(max(s.A, 0), limitT)
	if missing == 0 {
		return now, 0
	}
	base = max(now, last)
	elapsed := base - last
	if elapsed >= ceilDiv(missing, l.rq) {
		return base, 0
	}
	return base, missing - elapsed*l.rq
}

// bucketStore writes the state of a bucket missing ticks at base into s.
func (l *Limit) bucketStore(s *State, base, missing int64) {
	if l.alg == AlgorithmGCRA {
		*s = State{T: base + missing/l.rq, B: missing%l.rq + 1}
		return
	}
	*s = State{T: base, A: missing}
}
