package algo

// The bucket family — token bucket, leaky bucket (meter and queue) and GCRA —
// shares one model: a bucket of capacity B units that refills (or drains) at
// Q units per W µs. To keep fractional rates exact, amounts are counted in
// ticks: one unit is RW ticks and RQ ticks refill per µs, where RQ/RW is Q/W
// in lowest terms. All three store the bucket as one time: the theoretical
// arrival time TAT = T + (B-1)/RQ µs, when the bucket is full again; ticks
// missing at now are (TAT-now)·RQ. B holds the fraction plus one so that
// B = 0 marks a key never written, whatever T is. A time, unlike a count of
// ticks, keeps its meaning under other parameters (a reload, a degradation
// level scaling the limit): a debt read under another rate is the same
// refill time, so a client that spent a whole bucket finds it empty.
//
// A token or leaky bucket state with B = 0 and A > 0 is the form earlier
// versions wrote (T = last update, A = ticks missing at T), still read: a
// now before T counts as T.
//
// A leaky-bucket queue lets the bucket overfill by up to MaxWait·RQ ticks
// and delays the check until the overfill has drained.

// Bucket decides the bucket family (token bucket, leaky bucket meter and
// queue, GCRA). See Decide for the contract.
func Bucket(p *Params, s *State, now, cost int64, v *Verdict) bool {
	now = ClampTime(now)
	capT := p.B * p.RW // ticks in a full bucket
	limitT := p.limitTicks()
	base, missing := p.bucketLoad(s, now)

	// Outputs are measured from base (when the bucket was last seen, or now)
	// and reported relative to now.
	ahead := base - now

	if cost == 0 || cost > p.B {
		*v = Verdict{Allowed: cost == 0}
		p.view(v, ahead, missing, capT)
		if cost > p.B {
			v.Retry = MaxTime
		}
		return false
	}
	need := cost * p.RW // cost ≤ B, so need ≤ capT ≤ 2^53
	if missing > limitT-need {
		*v = Verdict{Retry: AddSat(ahead, p.refillCeil(missing-(limitT-need)))}
		p.view(v, ahead, missing, capT)
		return false
	}
	after := missing + need
	var delay int64
	if after > capT {
		delay = ahead + p.refillCeil(after-capT)
		if delay > p.MaxWait {
			// Only for a state in the earlier form after a clock step
			// back (ahead > 0): the wait from now would pass MaxWait
			// although the wait from base does not.
			*v = Verdict{Retry: delay - p.MaxWait}
			p.view(v, ahead, missing, capT)
			return false
		}
	}
	*v = Verdict{Allowed: true, Delay: delay}
	p.view(v, ahead, after, capT)
	// Store the bucket missing after ticks at base (see the top of the file).
	us, rest := p.refillTime(after)
	*s = State{T: base + us, B: rest + 1}
	return true
}

// view writes to v what a bucket missing m ≥ 0 ticks at now+ahead shows at
// now: the whole units it holds and the µs until it is full.
func (p *Params) view(v *Verdict, ahead, m, capT int64) {
	if m < capT {
		v.Remaining = p.units(capT - m)
	}
	v.Reset = AddSat(ahead, p.refillCeil(m))
}

// bucketLoad returns the time base ≥ now the bucket is seen at and the ticks
// missing then: for a state in the earlier token and leaky form, clamped to
// [0, limit]; for one in GCRA's form, a debt past limit (after a clock step
// back, or written under a slower rate) is seen at a later base where it is
// just past limit (by at most two units' worth of ticks).
func (p *Params) bucketLoad(s *State, now int64) (base, missing int64) {
	if p.Kind == KindGCRA || s.B > 0 {
		return p.gcraLoad(s.T, s.B, now)
	}
	return p.levelLoad(s.T, s.A, now)
}

// gcraLoad is bucketLoad for a state in GCRA's form: t is the theoretical
// arrival time, w the leftover ticks plus one (0: the zero State).
func (p *Params) gcraLoad(t, w, now int64) (base, missing int64) {
	last := ClampTime(t)
	if w <= 0 {
		return now, 0 // the zero State
	}
	frac := min(w-1, p.RQ-1)
	if last < now || last == now && frac == 0 {
		return now, 0 // TAT passed
	}
	// Ticks missing now are (last-now)·RQ + frac. When that is past any
	// admissible debt (a clock far behind TAT), see the bucket at the
	// later time base instead, where the debt is just past limit: both
	// refuse until then, and outputs measured from base stay exact
	// without overflowing.
	if k := p.Horizon; last-now > k {
		return last - k, k*p.RQ + frac
	}
	return now, (last-now)*p.RQ + frac
}

// levelLoad is bucketLoad for a token or leaky bucket state in the form
// earlier versions wrote: t is when the level was last set, w the level in
// ticks.
func (p *Params) levelLoad(t, w, now int64) (base, missing int64) {
	last := ClampTime(t)
	missing = min(max(w, 0), p.limitTicks())
	if missing == 0 {
		return now, 0
	}
	base = max(now, last)
	elapsed := base - last
	// Refilled when elapsed ≥ ⌈missing/RQ⌉, that is elapsed·RQ ≥ missing.
	// Past the horizon that holds for any missing ≤ limit; before it the
	// product is below limit + RQ ≤ 2^54 and cannot overflow.
	if elapsed >= p.Horizon || elapsed*p.RQ >= missing {
		return base, 0
	}
	return base, missing - elapsed*p.RQ
}

// limitTicks returns the deepest admissible debt in ticks: a full bucket,
// B·RW, plus what a queue may overfill by, MaxWait·RQ. NewParams keeps it
// ≤ 2^53.
func (p *Params) limitTicks() int64 {
	return p.B*p.RW + p.MaxWait*p.RQ
}
