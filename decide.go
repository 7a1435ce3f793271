package sluice

// State is one key's stored state under one Limit. The zero State is a key
// never seen: full quota. Its fields mean different things per algorithm
// and are exported so that stores (and the simulator) can keep them; treat
// them as opaque and let Decide interpret them. Decide accepts any State,
// including one written under different parameters of the same algorithm:
// out-of-range values are clamped, never trusted to create capacity.
type State struct {
	// T is a time in µs since Epoch: the window start (fixed window,
	// sliding counter), the last update (token and leaky bucket) or the
	// theoretical arrival time (GCRA).
	T int64
	// A is a count of units (fixed window, sliding counter's current
	// window) or of ticks missing from a full bucket (token and leaky bucket).
	A int64
	// B is the sliding counter's previous-window count, or GCRA's arrival
	// time fraction in ticks plus one (zero: never written).
	B int64
	// Log lists the sliding window log's admissions, oldest first.
	Log []LogEntry
}

// LogEntry is one admission in a sliding window log.
type LogEntry struct {
	At    int64 // µs since Epoch
	Units int64 // cost admitted at At
}

// Time bounds: Decide clamps now and stored times into [minTime, maxTime]
// (about ±73,000 years around Epoch), so neither adding a window nor the
// difference of two times ever overflows.
const (
	maxTime = 1 << 61
	minTime = -maxTime
)

// verdict is a Status in integer microseconds.
type verdict struct {
	allowed             bool
	remaining           int64
	reset, retry, delay int64 // µs
	lease               int64 // µs stamp of a concurrency lease taken
}

func (v *verdict) status() Status {
	var st Status
	v.writeStatus(&st)
	return st
}

// writeStatus fills *st from v (in place: a Status is seven words).
func (v *verdict) writeStatus(st *Status) {
	st.Allowed, st.Remaining, st.Lease = v.allowed, v.remaining, v.lease
	st.ResetAfter, st.Delay, st.RetryAfter = durationFromMicros(v.reset), durationFromMicros(v.delay), 0
	if !v.allowed {
		st.RetryAfter = durationFromMicros(v.retry)
		if v.retry >= maxTime {
			st.RetryAfter = Never
		}
	}
}

// Decide is the pure core of every algorithm: it returns the state after
// spending cost units of l at time now (µs since Epoch) from state s, and the
// Status of that check. A refused check returns s unchanged; so does cost 0,
// which is always allowed and reports the current state. A cost above
// l.Burst() is refused with RetryAfter Never. Times are clamped to about
// ±73,000 years around Epoch; a now earlier than the state's own latest time
// counts as that latest time (or, for GCRA, as time not yet elapsed), so a
// clock stepping back never creates capacity.
//
// For AlgorithmSlidingLog the returned Log may share s.Log's backing array;
// Decide never modifies s.Log's elements, so s stays valid for reading, but
// only one of the two may be appended to afterwards.
//
// Decide panics only on an invalid Limit (l.Err() != nil is a programming
// error; Limiter and the stores check it first).
func (l Limit) Decide(s State, now, cost int64) (State, Status) {
	var v verdict
	l.step(&s, now, cost, &v)
	return s, v.status()
}

// step is Decide in place: it writes the verdict to *v and, when the check
// is admitted with a cost, the next state to *s, and reports whether it did.
// (Passing pointers keeps the hot path free of copies of State and verdict.)
func (l *Limit) step(s *State, now, cost int64, v *verdict) bool {
	now = clampTime(now)
	switch l.alg {
	case AlgorithmFixedWindow:
		return l.fixedWindow(s, now, cost, v)
	case AlgorithmSlidingLog, AlgorithmConcurrency:
		return l.slidingLog(s, now, cost, v)
	case AlgorithmSlidingCounter:
		return l.slidingCounter(s, now, cost, v)
	case AlgorithmTokenBucket, AlgorithmLeakyBucket, AlgorithmGCRA:
		return l.bucket(s, now, cost, v)
	}
	panic("sluice: Decide on an invalid Limit: " + l.Err().Error())
}

func clampTime(t int64) int64 {
	return min(max(t, minTime), maxTime)
}
