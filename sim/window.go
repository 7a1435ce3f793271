package sim

// windowMax finds the most units admitted for one key within any span
// (t-w, t]. Admissions of each key are chained in arrival order through one
// shared slice, so keys cost three integers each and no allocation of their
// own; each admission is added and evicted once.
type windowMax struct {
	w          int64 // µs
	ev         []windowEvent
	head, tail []int32 // per key: oldest admission still in the span, newest; -1: none
	sum        []int64 // per key: units in the span

	worst    int64
	worstKey int32
	worstAt  int64
}

type windowEvent struct {
	t, units int64
	next     int32
}

// reset empties m for keys keys and a span of w µs, keeping its memory.
func (m *windowMax) reset(keys int, w int64, capacity int) {
	*m = windowMax{w: w, ev: m.ev[:0], head: resize(m.head, keys), tail: resize(m.tail, keys), sum: resize(m.sum, keys)}
	if cap(m.ev) < capacity {
		m.ev = make([]windowEvent, 0, capacity)
	}
	for i := range m.head {
		m.head[i], m.tail[i], m.sum[i] = -1, -1, 0
	}
}

// resize returns s with length n, reusing its array when large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// add records units admitted for key at t µs. Admissions of one key arrive
// in time order; a t earlier than the key's last one counts at that time.
func (m *windowMax) add(key int32, t, units int64) {
	e := int32(len(m.ev))
	if last := m.tail[key]; last >= 0 {
		t = max(t, m.ev[last].t)
		m.ev[last].next = e
	}
	m.ev = append(m.ev, windowEvent{t: t, units: units, next: -1})
	m.tail[key] = e
	h := m.head[key]
	if h < 0 {
		h = e
	}
	sum := m.sum[key] + units
	for m.ev[h].t <= t-m.w { // never evicts e itself: w ≥ 1
		sum -= m.ev[h].units
		h = m.ev[h].next
	}
	m.head[key], m.sum[key] = h, sum
	if sum > m.worst {
		m.worst, m.worstKey, m.worstAt = sum, key, t
	}
}
