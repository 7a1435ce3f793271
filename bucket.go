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
	capT := l.b * l.rw // ticks in a full bucket
	limitT := l.limitTicks()
	base, missing := l.bucketLoad(s, now)

	// Outputs are measured from base (when the bucket was last seen, or now)
	// and reported relative to now.
	ahead := base - now

	if cost == 0 || cost > l.b {
		*v = verdict{allowed: cost == 0}
		l.view(v, ahead, missing, capT)
		if cost > l.b {
			v.retry = maxTime
		}
		return false
	}
	need := cost * l.rw // cost ≤ b, so need ≤ capT ≤ 2^53
	if missing > limitT-need {
		*v = verdict{retry: addSat(ahead, l.refillCeil(missing-(limitT-need)))}
		l.view(v, ahead, missing, capT)
		return false
	}
	after := missing + need
	var delay int64
	if after > capT {
		delay = ahead + l.refillCeil(after-capT)
		if delay > l.maxWait {
			// Only after a clock step back (ahead > 0): the wait from now
			// would pass MaxWait although the wait from base does not.
			*v = verdict{retry: delay - l.maxWait}
			l.view(v, ahead, missing, capT)
			return false
		}
	}
	// view(v, ahead, after, capT) written out, to spare the hot path a
	// call and to divide after by rq once for both the reset time and
	// GCRA's arrival time.
	*v = verdict{allowed: true, delay: delay}
	if after < capT {
		v.remaining = l.units(capT - after)
	}
	us, rest := l.refillTime(after)
	full := us
	if rest != 0 {
		full++
	}
	v.reset = addSat(ahead, full)
	// Store the bucket missing after ticks at base (see the top of the file).
	if l.alg == AlgorithmGCRA {
		*s = State{T: base + us, B: rest + 1}
	} else {
		*s = State{T: base, A: after}
	}
	return true
}

// view writes to v what a bucket missing m ≥ 0 ticks at now+ahead shows at
// now: the whole units it holds and the µs until it is full.
func (l *Limit) view(v *verdict, ahead, m, capT int64) {
	if m < capT {
		v.remaining = l.units(capT - m)
	}
	v.reset = addSat(ahead, l.refillCeil(m))
}

// bucketLoad returns the time base ≥ now the bucket is seen at and the ticks
// missing then, clamped to [0, limit] for states written under other
// parameters, except GCRA's debt after a clock step back, which may pass
// limit (by at most two units' worth of ticks).
func (l *Limit) bucketLoad(s *State, now int64) (base, missing int64) {
	if l.alg == AlgorithmGCRA {
		return l.bucketLoadWords(s.T, s.B, now)
	}
	return l.bucketLoadWords(s.T, s.A, now)
}

// bucketLoadWords is bucketLoad of the state's two words: T, and B for
// GCRA or A for the token and leaky buckets (w).
func (l *Limit) bucketLoadWords(t, w, now int64) (base, missing int64) {
	if l.alg == AlgorithmGCRA {
		return l.gcraLoad(t, w, now)
	}
	return l.levelLoad(t, w, now)
}

// gcraLoad is bucketLoadWords for GCRA: t is the theoretical arrival time,
// w the leftover ticks plus one (0: the zero State). Small enough to inline.
func (l *Limit) gcraLoad(t, w, now int64) (base, missing int64) {
	last := clampTime(t)
	if w <= 0 {
		return now, 0 // the zero State
	}
	frac := min(w-1, l.rq-1)
	if last < now || last == now && frac == 0 {
		return now, 0 // TAT passed
	}
	// Ticks missing now are (last-now)·rq + frac. When that is past any
	// admissible debt (a clock far behind TAT), see the bucket at the
	// later time base instead, where the debt is just past limit: both
	// refuse until then, and outputs measured from base stay exact
	// without overflowing.
	if k := l.horizon; last-now > k {
		return last - k, k*l.rq + frac
	}
	return now, (last-now)*l.rq + frac
}

// levelLoad is bucketLoadWords for the token and leaky buckets: t is when
// the level was last set, w the level in ticks.
func (l *Limit) levelLoad(t, w, now int64) (base, missing int64) {
	last := clampTime(t)
	missing = min(max(w, 0), l.limitTicks())
	if missing == 0 {
		return now, 0
	}
	base = max(now, last)
	elapsed := base - last
	// Refilled when elapsed ≥ ⌈missing/rq⌉, that is elapsed·rq ≥ missing.
	// Past the horizon that holds for any missing ≤ limit; before it the
	// product is below limit + rq ≤ 2^54 and cannot overflow.
	if elapsed >= l.horizon || elapsed*l.rq >= missing {
		return base, 0
	}
	return base, missing - elapsed*l.rq
}

// limitTicks returns the deepest admissible debt in ticks: a full bucket,
// b·rw, plus what a queue may overfill by, maxWait·rq. build keeps it ≤ 2^53.
func (l *Limit) limitTicks() int64 {
	return l.b*l.rw + l.maxWait*l.rq
}
