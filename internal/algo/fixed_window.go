package algo

// FixedWindow is the fixed window: T = the time of the last charge (its
// receipt, Verdict.Charged), A = units admitted in the window that holds
// T. Windows are aligned to the epoch, or are calendar periods
// (Params.Window). The count belongs to the window of p that holds T: it
// counts while that window is now's, is dropped once now is in a later
// one, and a now inside an earlier window than T's (a clock step back)
// counts against T's window. See Decide for the contract. It takes only a
// window's start and end and the differences of times, so it is exact for
// windows up to 2^46 µs (sluice.MaxFixedWindow), twice the other
// algorithms' bound.
//
// Under the parameters that wrote it, the window that holds T is the one
// that counted the state, so every rollover starts afresh; a state of an
// earlier version, whose T is its window's start, is read alike. Under
// other windows of the limit (a calendar moved to another zone or start, a
// window lengthened or shortened) a count is kept while its last charge
// falls in now's window: a month moved west mid-month keeps what was spent
// in it, one moved east counts the old month until the new one ends. The
// state does not tell when the units before the last charge were spent, so
// a count is kept or dropped whole: one dropped was charged wholly before
// now's window (unless the clock stepped back), one kept also counts its
// units charged before that window's start, to the window's end.
func FixedWindow(p *Params, s *State, now, cost int64, v *Verdict) (changed bool) {
	now = ClampTime(now)
	start, end := p.Window(now)
	count := max(s.A, 0)
	if last := ClampTime(s.T); count > 0 && last >= start {
		start, end = p.Window(last) // the same window, or a clock step back
	} else {
		count = 0
	}
	*v = Verdict{Allowed: cost == 0 || count <= p.Q-cost}
	switch {
	case cost > p.Q:
		v.Retry = MaxTime
	case !v.Allowed:
		v.Retry = end - now
	case cost > 0:
		count += cost
		v.Charged = max(now, start)
		*s, changed = State{T: v.Charged, A: count}, true
	}
	v.Remaining = max(p.Q-count, 0)
	if count > 0 {
		v.Reset = end - now
	}
	return changed
}
