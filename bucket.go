package sluice

// The bucket family — token bucket, leaky bucket (meter and queue) and GCRA —
// shares one model: a bucket of capacity b units that refills (or drains) at
// q units per w µs. To keep fractional rates exact, amounts are counted in
// ticks: one unit is rw ticks and rq ticks refill per µs, where rq/rw is q/w
// in lowest terms. The algorithms differ only in how they store the bucket:
//
//   - token and leaky bucket: T = last update, A = ticks missing at T;
//   - GCRA: the theoretical arrival time TAT = T + B/rq µs; ticks missing at
//     now are (TAT-now)·rq.
//
// A leaky-bucket queue lets the bucket overfill by up to maxWait·rq ticks and
// delays the check until the overfill has drained.

func (l *Limit) bucket(s State, now, cost int64) (State, verdict) {
	capT := l.b * l.rw              // ticks in a full bucket
	limitT := capT + l.maxWait*l.rq // deepest admissible debt (queue)
	base, missing := l.bucketLoad(s, now, limitT)

	// Outputs are measured from base (when the bucket was last seen, or now)
	// and reported relative to now.
	ahead := base - now
	view := func(m int64) (remaining, reset int64) {
		if m < capT {
			remaining = (capT - m) / l.rw
		}
		return remaining, ahead + ceilDiv(m, l.rq)
	}

	if cost == 0 || cost > l.b {
		v := verdict{allowed: cost == 0}
		v.remaining, v.reset = view(missing)
		if cost > l.b {
			v.retry = maxTime
		}
		return s, v
	}
	after := missing + cost*l.rw // cost ≤ b, so no overflow: both ≤ 2^53
	if after > limitT {
		v := verdict{retry: ahead + ceilDiv(after-limitT, l.rq)}
		v.remaining, v.reset = view(missing)
		return s, v
	}
	v := verdict{allowed: true}
	v.remaining, v.reset = view(after)
	if after > capT {
		v.delay = ahead + ceilDiv(after-capT, l.rq)
	}
	return l.bucketStore(s, base, after), v
}

// bucketLoad returns the time the bucket is seen at and the ticks missing
// then, clamped to [0, limit] for states written under other parameters,
// except GCRA's debt after a clock step back, which may exceed limit.
func (l *Limit) bucketLoad(s State, now, limitT int64) (base, missing int64) {
	if l.alg == AlgorithmGCRA {
		frac := min(max(s.B, 0), l.rq-1)
		if s.T < now || s.T == now && frac == 0 || s.T == 0 && frac == 0 {
			return now, 0 // TAT passed, or the zero State
		}
		return now, addSat(mulSat(s.T-now, l.rq), frac)
	}
	missing = min(max(s.A, 0), limitT)
	if missing == 0 {
		return now, 0
	}
	base = max(now, s.T)
	elapsed := base - s.T
	if elapsed >= ceilDiv(missing, l.rq) {
		return base, 0
	}
	return base, missing - elapsed*l.rq
}

// bucketStore returns the state of a bucket missing ticks at base.
func (l *Limit) bucketStore(s State, base, missing int64) State {
	if l.alg == AlgorithmGCRA {
		return State{T: base + missing/l.rq, B: missing % l.rq}
	}
	return State{T: base, A: missing}
}
