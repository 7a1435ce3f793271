package algo

// Refundable reports whether Refund can take a charge of k back exactly:
// the fixed window, the sliding counter and the sliding log keep what they
// counted (a window's count, a log's entry), so taking a charge out of it
// leaves the state the key would have had without it.
//
// The bucket family cannot: a bucket keeps only how much it misses, and
// while it would have been full without the charge, its refill went to the
// charge alone. Whether it was full in between is not in the state, so a
// refund there either gives back less than was charged or, given back in
// full, more than was ever missing. A concurrency lease is given back by
// Release, not refunded.
func Refundable(k Kind) bool {
	return k == KindFixedWindow || k == KindSlidingCounter || k == KindSlidingLog
}

// Refund returns the state after taking back cost units that p charged at
// at (Verdict.Charged): the state as if they had never been charged, while
// the window that counted them still counts them, and s unchanged once it
// no longer does (or for a kind Refundable rejects).
//
// The fixed window takes them from its count while T (its last charge, or
// its window's start as earlier versions wrote it) falls in the window of
// at; the sliding counter from its current count while T is that window,
// from its previous count while T is the window after; the sliding log from the
// entries stamped at, newest first (those not yet dropped from the log,
// whether or not they have expired). The returned Log never shares storage
// with s.Log. Refund of the same charge twice takes it back twice: the
// caller refunds each charge once.
//
// Go twin of refund_charge.lua's undo (redis/lua).
func Refund(p *Params, s State, at, cost int64) State {
	if cost <= 0 {
		return s
	}
	switch p.Kind {
	case KindFixedWindow:
		counted, _ := p.Window(ClampTime(s.T))
		if start, _ := p.Window(ClampTime(at)); counted == start {
			s.A = max(s.A-cost, 0)
		}
	case KindSlidingCounter:
		switch mark := windowStart(ClampTime(at), p.W); s.T {
		case mark:
			s.A = max(s.A-cost, 0)
		case mark + p.W:
			s.B = max(s.B-cost, 0)
		}
	case KindSlidingLog:
		return refundLog(s, at, cost)
	}
	return s
}

// refundLog takes cost units out of the entries of s stamped at, newest
// first, dropping the entries it empties.
func refundLog(s State, at, cost int64) State {
	found := false
	for _, e := range s.Log {
		found = found || e.At == at
	}
	if !found {
		return s
	}
	log := make([]Entry, len(s.Log))
	copy(log, s.Log)
	for i := len(log) - 1; i >= 0 && cost > 0; i-- {
		if log[i].At != at {
			continue
		}
		take := min(max(log[i].Units, 0), cost)
		log[i].Units -= take
		cost -= take
	}
	kept := log[:0]
	for _, e := range log {
		if e.Units > 0 {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return State{}
	}
	return State{Log: kept}
}
