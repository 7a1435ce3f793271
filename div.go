package sluice

// The bucket algorithms turn ticks into units (dividing by rw) and into
// refill time (dividing by rq). These helpers do it for the non-negative
// amounts they deal in: in unsigned arithmetic, which needs no sign fix-up
// around the DIV instruction, and with no division at all when the divisor
// is 1, which is common: rq = 1 whenever the window is a whole multiple of
// 1/Q µs (10,000 per second: a unit is 100 ticks), rw = 1 whenever Q is a
// multiple of the window in µs (a billion per second).

// units returns ⌊t/rw⌋, the whole units in t ≥ 0 ticks.
func (l *Limit) units(t int64) int64 {
	if l.rw == 1 {
		return t
	}
	return int64(uint64(t) / uint64(l.rw))
}

// refillTime returns ⌊m/rq⌋ and m mod rq for m ≥ 0 ticks, from one
// division: the whole µs that refill m ticks and the ticks left over.
func (l *Limit) refillTime(m int64) (us, rest int64) {
	if l.rq == 1 {
		return m, 0
	}
	q, r := uint64(m)/uint64(l.rq), uint64(m)%uint64(l.rq)
	return int64(q), int64(r)
}

// refillCeil returns ⌈m/rq⌉ for m ≥ 0: the µs until m ticks have refilled.
func (l *Limit) refillCeil(m int64) int64 {
	us, rest := l.refillTime(m)
	if rest != 0 {
		us++
	}
	return us
}
