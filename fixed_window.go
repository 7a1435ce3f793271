package sluice

// fixedWindow: T = start of the window the count belongs to, A = units
// admitted in it. Windows are aligned to Epoch; a now inside an earlier window
// than T (a clock step back) counts against T's window.
func (l *Limit) fixedWindow(s *State, now, cost int64, v *verdict) (changed bool) {
	start, count := windowStart(now, l.w), max(s.A, 0)
	if last := clampTime(s.T); count > 0 && last >= start {
		start = windowStart(last, l.w) // the same window, or a clock step back
	} else {
		count = 0
	}
	end := start + l.w
	*v = verdict{allowed: cost == 0 || count <= l.q-cost}
	switch {
	case cost > l.q:
		v.retry = maxTime
	case !v.allowed:
		v.retry = end - now
	case cost > 0:
		count += cost
		*s, changed = State{T: start, A: count}, true
	}
	v.remaining = max(l.q-count, 0)
	if count > 0 {
		v.reset = end - now
	}
	return changed
}
