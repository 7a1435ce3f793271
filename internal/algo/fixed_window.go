package algo

// FixedWindow is the fixed window: T = start of the window the count
// belongs to, A = units admitted in it. Windows are aligned to the epoch,
// or are calendar periods (Params.Window); a now inside an earlier window
// than T (a clock step back) counts against T's window. See Decide for the
// contract. It takes only a window's start and end and the differences of
// times, so it is exact for windows up to 2^46 µs (sluice.MaxFixedWindow),
// twice the other algorithms' bound.
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
		*s, changed = State{T: start, A: count}, true
		v.Charged = max(now, start)
	}
	v.Remaining = max(p.Q-count, 0)
	if count > 0 {
		v.Reset = end - now
	}
	return changed
}
