package sim

import "math"

// windowMax finds the most units admitted for one key within any span
// (t-w, t]. Admissions of each key are chained in arrival order through one
// shared slice, so a key costs 16 bytes of bookkeeping and no allocation of
// its own; each admission is added and evicted once. For a calendar quota
// it also finds the most admitted for one key within one calendar period.
type windowMax struct {
	w    int64 // µs
	ev   []windowEvent
	keys []windowKey

	worst    int64
	worstKey int32
	worstAt  int64
	worstSeq int // the seq of the admission that reached worst

	// cal is the calendar quota whose periods are measured (period 0:
	// none); periods holds each key's current period.
	cal         rate
	periods     []keyPeriod
	worstPeriod int64
}

// keyPeriod is the calendar period of a key's latest admission: its end
// (µs, exclusive) and the units admitted in it.
type keyPeriod struct{ end, sum int64 }

// windowKey is one key's span: its oldest admission still inside and its
// newest (indexes into ev; -1: none), and the units inside.
type windowKey struct {
	head, tail int32
	sum        int64
}

type windowEvent struct {
	t, units int64
	next     int32
}

// reset empties m for keys keys and a span of w µs, and the periods of cal
// when it is a calendar quota, keeping its memory.
func (m *windowMax) reset(keys int, w int64, capacity int, cal rate) {
	*m = windowMax{w: w, ev: m.ev[:0], keys: m.keys[:0], cal: cal, periods: m.periods[:0]}
	if cal.calendar() {
		if cap(m.periods) < keys {
			m.periods = make([]keyPeriod, keys)
		}
		m.periods = m.periods[:keys]
		for i := range m.periods {
			m.periods[i] = keyPeriod{end: math.MinInt64}
		}
	}
	if cap(m.ev) < capacity {
		m.ev = make([]windowEvent, 0, capacity)
	}
	if cap(m.keys) < keys {
		m.keys = make([]windowKey, keys)
	}
	m.keys = m.keys[:keys]
	for i := range m.keys {
		m.keys[i] = windowKey{head: -1, tail: -1}
	}
}

// add records units admitted for key at t µs. Admissions of one key arrive
// in time order; a t earlier than the key's last one counts at that time.
// seq orders admissions across keys (the trace's arrival index): of two
// that reach the same worst sum, the one of lower seq is reported, so that
// keys may be replayed one after another or interleaved alike.
func (m *windowMax) add(key int32, t, units int64, seq int) {
	k := &m.keys[key]
	e := int32(len(m.ev))
	if k.tail >= 0 {
		t = max(t, m.ev[k.tail].t)
		m.ev[k.tail].next = e
	}
	m.ev = append(m.ev, windowEvent{t: t, units: units, next: -1})
	k.tail = e
	h := k.head
	if h < 0 {
		h = e
	}
	sum := k.sum + units
	for m.ev[h].t <= t-m.w { // never evicts e itself: w ≥ 1
		sum -= m.ev[h].units
		h = m.ev[h].next
	}
	k.head, k.sum = h, sum
	if sum > m.worst || (sum == m.worst && seq < m.worstSeq) {
		m.worst, m.worstKey, m.worstAt, m.worstSeq = sum, key, t, seq
	}
	if m.cal.period != 0 {
		p := &m.periods[key]
		if t >= p.end { // t is never before the start of the key's period: times only grow
			_, p.end = m.cal.bounds(t)
			p.sum = 0
		}
		p.sum += units
		m.worstPeriod = max(m.worstPeriod, p.sum)
	}
}
