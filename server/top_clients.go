package server

import "container/heap"

// topTable holds the most refused clients, at most topCapacity, by the
// space-saving algorithm (Metwally et al. 2005): a client not in a full
// table takes the place of the least refused one and starts from its
// count, so a flood of new clients costs nothing but accuracy at the
// bottom of the list. An entry's Count is thus an upper bound on its
// client's refusals since the start: those counted since it last came in,
// which it certainly got, plus the count it inherited, which is at least
// those it got before and may be other clients' (see certain). Its
// entries are a min-heap on their count: a refusal costs O(log
// topCapacity) comparisons, whichever client it is of. The zero topTable
// is empty; it is not safe for concurrent use (stats.mu guards it).
type topTable struct {
	bySubject map[string]*topEntry
	entries   topHeap
}

// refuse counts a refusal of subject; describe gives a new entry's client
// and plan (see displayClient), called only for a subject not in the table.
func (t *topTable) refuse(subject string, describe func() (client, plan string)) {
	if e := t.bySubject[subject]; e != nil {
		e.Count++
		heap.Fix(&t.entries, e.index)
		return
	}
	if t.bySubject == nil {
		t.bySubject = map[string]*topEntry{}
	}
	e := &topEntry{}
	if len(t.entries.e) == topCapacity {
		e = t.entries.e[0] // the least refused makes way, its count kept
		delete(t.bySubject, e.subject)
		e.inherited = e.Count
	}
	e.subject = subject
	e.Client, e.Plan = describe()
	e.Count++
	t.bySubject[subject] = e
	if e.Count == 1 {
		heap.Push(&t.entries, e)
	} else {
		heap.Fix(&t.entries, e.index)
	}
}

// len returns the number of clients in the table.
func (t *topTable) len() int { return len(t.entries.e) }

// topHeap is a min-heap of entries on their count (container/heap), each
// entry knowing its index.
type topHeap struct {
	e []*topEntry
	// compared counts the comparisons of counts the heap has made: its
	// upkeep's cost.
	compared int
}

func (h *topHeap) Len() int { return len(h.e) }

func (h *topHeap) Less(i, j int) bool {
	h.compared++
	return h.e[i].Count < h.e[j].Count
}

func (h *topHeap) Swap(i, j int) {
	h.e[i], h.e[j] = h.e[j], h.e[i]
	h.e[i].index, h.e[j].index = i, j
}

func (h *topHeap) Push(x any) {
	e := x.(*topEntry)
	e.index = len(h.e)
	h.e = append(h.e, e)
}

// Pop is never called (the table replaces its least refused entry in
// place); it is part of heap.Interface.
func (h *topHeap) Pop() any {
	e := h.e[len(h.e)-1]
	h.e = h.e[:len(h.e)-1]
	return e
}
