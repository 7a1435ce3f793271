package algo

// SlidingLog is the sliding window log, and the concurrency limit's lease
// book: Log holds every admission (time, units), oldest first. An
// admission at t counts while now < t+W, so at most Q units are admitted in
// any span (t-W, t]. A now earlier than the newest entry (a clock step
// back) counts as that entry's time.
//
// Under KindConcurrency an admission's time is its lease (Verdict.Lease),
// which Release gives back. No two leases held at once have the same
// stamp: a lease taken at or before the newest one's stamp is stamped one
// µs after it, and is held that much longer. Leases expire by now alone,
// so a clock stepping back expires none early. See Decide for the
// contract.
func SlidingLog(p *Params, s *State, now, cost int64, v *Verdict) (changed bool) {
	now = ClampTime(now)
	log, eff, stamp := s.Log, now, now
	if n := len(log); n > 0 {
		newest := ClampTime(log[n-1].At)
		if p.Kind == KindConcurrency {
			stamp = max(now, newest+1) // every lease held has a stamp of its own
		} else {
			eff = max(now, newest)
			stamp = eff
		}
	}
	for len(log) > 0 && log[0].At <= eff-p.W {
		log = log[1:]
	}
	var used int64
	for _, e := range log {
		used = AddSat(used, max(e.Units, 0))
	}

	*v = Verdict{Allowed: cost == 0 || used <= p.Q-cost}
	switch {
	case cost > p.Q:
		v.Retry = MaxTime
	case !v.Allowed:
		v.Retry = logRetry(p, log, used+cost-p.Q) - now
	case cost > 0:
		log = append(log, Entry{At: stamp, Units: cost})
		used += cost
		*s, changed = State{Log: log}, true
		if p.Kind == KindConcurrency {
			v.Lease = stamp
		} else {
			v.Charged = stamp
		}
	}
	v.Remaining = max(p.Q-used, 0)
	if used > 0 {
		v.Reset = ClampTime(log[len(log)-1].At) + p.W - now
	}
	return changed
}

// logRetry returns the time at which the oldest entries holding at least
// excess units have all left the window.
func logRetry(p *Params, log []Entry, excess int64) int64 {
	var freed int64
	for _, e := range log {
		freed = AddSat(freed, max(e.Units, 0))
		if freed >= excess {
			return ClampTime(e.At) + p.W
		}
	}
	return MaxTime
}

// Release returns the state after giving back the concurrency lease of
// units stamped at (Verdict.Lease): it removes one matching entry, if any is
// left (an expired lease has already gone). The returned Log never shares
// storage with s.Log. For other kinds it returns s unchanged.
func Release(p *Params, s State, at, units int64) State {
	if p.Kind != KindConcurrency {
		return s
	}
	for i, e := range s.Log {
		if e.At == at && e.Units == units {
			log := make([]Entry, 0, len(s.Log)-1)
			log = append(append(log, s.Log[:i]...), s.Log[i+1:]...)
			return State{Log: log}
		}
	}
	return s
}
