package failover

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sluice-dev/sluice"
)

// maxMarks bounds the limits a node keeps a mark for. Limits are few (they
// come from the configuration); past the bound a limit's fallback marks
// the whole node, which then returns for all its keys.
const maxMarks = 256

// A mark is the return state of the keys of one limit ID on a node that
// did not fail, as a node's own fields are of all its keys (see
// Store.owe): a call on the node is decided locally with units of such
// keys admitted when another node of the call could not decide it, and
// the call's bound cut their charge at once short. Only those keys return
// then; the node's others stay on the primary.
type mark struct {
	fellBack    atomic.Bool  // as node.fellBack, for the limit's keys
	returnUntil atomic.Int64 // as node.returnUntil, for the limit's keys
	returns     atomic.Int64 // as node.returns, for the limit's keys
}

// marks holds a node's marks by limit ID, made on first use, read without
// a lock: a mark is made only when a local decision admits units, rarely.
type marks struct {
	m  atomic.Pointer[map[string]*mark] // nil: none yet
	mu sync.Mutex                       // held to add one
}

// lookup returns the mark of the limit called id, or nil if none was made.
func (ms *marks) lookup(id string) *mark {
	if m := ms.m.Load(); m != nil {
		return (*m)[id]
	}
	return nil
}

// get returns the mark of the limit called id, made if new, or nil when
// the node holds maxMarks already.
func (ms *marks) get(id string) *mark {
	if k := ms.lookup(id); k != nil {
		return k
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	old := ms.m.Load()
	if old != nil {
		if k := (*old)[id]; k != nil {
			return k
		}
		if len(*old) >= maxMarks {
			return nil
		}
	}
	m := make(map[string]*mark, 1+lenOf(old))
	if old != nil {
		for name, k := range *old {
			m[name] = k
		}
	}
	k := &mark{}
	m[id] = k
	ms.m.Store(&m)
	return k
}

// lenOf returns the length of the map m points to, 0 for nil.
func lenOf(m *map[string]*mark) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// each calls fn for every mark.
func (ms *marks) each(fn func(*mark)) {
	if m := ms.m.Load(); m != nil {
		for _, k := range *m {
			fn(k)
		}
	}
}

// fellBackOn records that a local decision admitted units of c's limit on
// n, a node the decision does not blame, that it could not charge at once:
// its mark falls back, or the whole node when it holds no room for
// another mark.
func (n *node) fellBackOn(c *sluice.Check) {
	if k := n.marks.get(c.Limit.ID()); k != nil {
		k.fellBack.Store(true)
		return
	}
	n.fellBack.Store(true)
}

// marksOf appends to ks the marks of the limits of checks on their nodes
// ns, without repeats: none, and no lookup, when no node of ns has any.
func (f *Store) marksOf(checks []sluice.Check, ns []*node, ks []*mark) []*mark {
	marked := false
	for _, n := range ns {
		marked = marked || n.marks.m.Load() != nil
	}
	if !marked {
		return ks
	}
	for i := range checks {
		c := &checks[i]
		name := f.nodeName(c)
		n := f.nodes.lookup(name)
		if n == nil || n.marks.m.Load() == nil {
			continue
		}
		if k := n.marks.lookup(c.Limit.ID()); k != nil && !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// A hold is what a return call counts itself in until it ends (see
// Store.returning): the return calls of its nodes when one of them
// returns, or else only those of its limits' marks, so that a call that
// does not return waits only for the return calls that may still charge
// its keys.
type hold struct {
	nodes []*node
	marks []*mark
}

// release ends the count of a call (see hold).
func (h hold) release() {
	for _, n := range h.nodes {
		n.returns.Add(-1)
	}
	for _, k := range h.marks {
		k.returns.Add(-1)
	}
}
