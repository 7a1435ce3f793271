package server

// topTable holds the most refused clients, at most topCapacity, by the
// space-saving algorithm: a client not in a full table takes the place of
// the least refused one and starts from its count, so a flood of new
// clients costs nothing but accuracy at the bottom of the list. Its
// entries are a min-heap on their count: a refusal costs O(log
// topCapacity) comparisons, whichever client it is of. The zero topTable
// is empty; it is not safe for concurrent use (stats.mu guards it).
type topTable struct {
	bySubject map[string]*topEntry
	heap      []*topEntry // heap[0] is the least refused
	// compared counts the comparisons of counts the table has made: its
	// upkeep's cost.
	compared int
}

// refuse counts a refusal of subject; describe gives a new entry's client
// and plan (see displayClient), called only for a subject not in the table.
func (t *topTable) refuse(subject string, describe func() (client, plan string)) {
	if e := t.bySubject[subject]; e != nil {
		e.Count++
		t.down(e.index)
		return
	}
	if t.bySubject == nil {
		t.bySubject = map[string]*topEntry{}
	}
	var e *topEntry
	if len(t.heap) < topCapacity {
		e = &topEntry{index: len(t.heap)}
		t.heap = append(t.heap, e)
	} else {
		e = t.heap[0] // the least refused makes way, its count kept
		delete(t.bySubject, e.subject)
	}
	e.subject = subject
	e.Client, e.Plan = describe()
	e.Count++
	t.bySubject[subject] = e
	t.up(e.index)
	t.down(e.index)
}

// len returns the number of clients in the table.
func (t *topTable) len() int { return len(t.heap) }

// less reports whether the entry at i is less refused than the one at j.
func (t *topTable) less(i, j int) bool {
	t.compared++
	return t.heap[i].Count < t.heap[j].Count
}

func (t *topTable) swap(i, j int) {
	t.heap[i], t.heap[j] = t.heap[j], t.heap[i]
	t.heap[i].index, t.heap[j].index = i, j
}

// up moves the entry at i towards the root while it is less refused than
// its parent.
func (t *topTable) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(i, p) {
			return
		}
		t.swap(i, p)
		i = p
	}
}

// down moves the entry at i towards the leaves while a child is less
// refused.
func (t *topTable) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(t.heap) {
			return
		}
		if r := c + 1; r < len(t.heap) && t.less(r, c) {
			c = r
		}
		if !t.less(c, i) {
			return
		}
		t.swap(i, c)
		i = c
	}
}
