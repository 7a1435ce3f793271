package sluice

// slidingLog keeps every admission (time, units), oldest first. An admission
// at t counts while now < t+w, so at most q units are admitted in any span
// (t-w, t]. A now earlier than the newest entry (a clock step back) counts as
// that entry's time.
func (l *Limit) slidingLog(s *State, now, cost int64, v *verdict) (changed bool) {
	log, eff := s.Log, now
	if n := len(log); n > 0 {
		eff = max(now, clampTime(log[n-1].At)) // new entries are stamped eff
	}
	for len(log) > 0 && log[0].At <= eff-l.w {
		log = log[1:]
	}
	var used int64
	for _, e := range log {
		used = addSat(used, max(e.Units, 0))
	}

	*v = verdict{allowed: cost == 0 || used <= l.q-cost}
	switch {
	case cost > l.q:
		v.retry = maxTime
	case !v.allowed:
		v.retry = l.logRetry(log, used+cost-l.q) - now
	case cost > 0:
		log = append(log, LogEntry{At: eff, Units: cost})
		used += cost
		*s, changed = State{Log: log}, true
		if l.alg == AlgorithmConcurrency {
			v.lease = eff
		}
	}
	v.remaining = max(l.q-used, 0)
	if used > 0 {
		v.reset = clampTime(log[len(log)-1].At) + l.w - now
	}
	return changed
}

// logRetry returns the time at which the oldest entries holding at least
// excess units have all left the window.
func (l *Limit) logRetry(log []LogEntry, excess int64) int64 {
	var freed int64
	for _, e := range log {
		freed = addSat(freed, max(e.Units, 0))
		if freed >= excess {
			return clampTime(e.At) + l.w
		}
	}
	return maxTime
}

// Release returns the state after giving back the concurrency lease of units
// stamped at (Status.Lease): it removes one matching entry, if any is left
// (an expired lease has already gone). The returned Log never shares
// storage with s.Log. For other algorithms it returns s unchanged.
func (l Limit) Release(s State, at, units int64) State {
	if l.alg != AlgorithmConcurrency {
		return s
	}
	for i, e := range s.Log {
		if e.At == at && e.Units == units {
			log := make([]LogEntry, 0, len(s.Log)-1)
			log = append(append(log, s.Log[:i]...), s.Log[i+1:]...)
			return State{Log: log}
		}
	}
	return s
}
