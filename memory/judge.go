package memory

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// maxJudges bounds the parameter sets the store keeps to rank the states
// of one limit name and algorithm by (see table.rank): limits that differ
// in quantity, window, burst or max wait, as the plans of a policy and its
// degradation levels make them.
const maxJudges = 16

// shareOne is a whole capacity in a rank's share of it used.
const shareOne = 1 << 20

// A rank orders states for eviction, the lowest first (see the package
// doc).
type rank struct {
	class rankClass
	// v orders states within their class: for classUsed the share of the
	// capacity used, in [0, shareOne]; for classRefusing the time (µs since
	// sluice.Epoch) at which the state stops refusing.
	v int64
	// exp, the state's expiry, breaks ties: the sooner first.
	exp int64
}

// rankClass is the first key of a rank.
type rankClass uint8

const (
	// classFull: back at full capacity, equivalent to a fresh state.
	classFull rankClass = iota
	// classUsed: some capacity used, and a check of cost 1 fits now.
	classUsed
	// classRefusing: a check of cost 1 is refused now, or the state was
	// written under parameters the store does not know (it may refuse).
	classRefusing
)

// before reports whether r is evicted before o.
func (r rank) before(o rank) bool {
	if r.class != o.class {
		return r.class < o.class
	}
	if r.v != o.v {
		return r.v < o.v
	}
	return r.exp < o.exp
}

// sameParams reports whether a and b, of one name and algorithm, decide
// every state alike (shadow mode aside, which Decide ignores).
func sameParams(a, b *sluice.Limit) bool {
	return a.Quantity() == b.Quantity() && a.Window() == b.Window() &&
		a.Burst() == b.Burst() && a.MaxWait() == b.MaxWait()
}

// judgeSet keeps, for each limit name and algorithm, the parameter sets
// the store has decided it under, for the tables of every shard to rank
// their states by.
type judgeSet struct {
	mu sync.Mutex
	m  map[tableKey]*judges
}

// judges are the parameter sets of one name and algorithm, the most
// recently noted first, at most maxJudges: a list replaced whole, of
// checks of cost 0 (peeks) under each.
type judges struct {
	ls atomic.Pointer[[]sluice.Check]
	// order is how many names and algorithms the store had met before
	// this one: calls take their entries by it (see entryOrder). It never
	// changes, as the store never forgets the judges of a name and
	// algorithm.
	order uint32
}

// of returns the judges of k, made with l's parameters when k has none.
func (js *judgeSet) of(k tableKey, l *sluice.Limit) *judges {
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.m == nil {
		js.m = map[tableKey]*judges{}
	}
	j := js.m[k]
	if j == nil {
		j = newJudges(l)
		j.order = uint32(len(js.m))
		js.m[k] = j
	}
	return j
}

func newJudges(l *sluice.Limit) *judges {
	j := &judges{}
	j.ls.Store(&[]sluice.Check{{Limit: *l}})
	return j
}

// list returns the peeks under each parameter set; the caller must not
// modify them.
func (j *judges) list() []sluice.Check { return *j.ls.Load() }

// note adds l's parameters to j unless it has them; beyond maxJudges the
// least recently added are forgotten, and the states only they can have
// written then rank as refusing.
func (j *judges) note(js *judgeSet, l *sluice.Limit) {
	if j.has(l) {
		return
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if j.has(l) {
		return
	}
	old := j.list()
	next := make([]sluice.Check, 1, min(len(old)+1, maxJudges))
	next[0].Limit = *l
	next = append(next, old[:min(len(old), maxJudges-1)]...)
	j.ls.Store(&next)
}

func (j *judges) has(l *sluice.Limit) bool {
	ls := j.list()
	for i := range ls {
		if sameParams(&ls[i].Limit, l) {
			return true
		}
	}
	return false
}

// rank ranks the state in slot i at now; the caller holds its entry.
//
// A state in a table whose limits differ (two plans, or degradation levels)
// is ranked by the limits that may have written it: every decision that
// changes a state keeps in its entry when the state is back at full quota,
// a time that under the writer's limit does not move as time passes, so a
// limit that puts that time elsewhere did not write it. Of those that may
// have, the latest rank counts; a state none of them can have written
// ranks as refusing until its expiry.
func (t *table) rank(i int, now int64) rank {
	e := &t.arr.es[i]
	tag := e.tag.Load()
	exp := expiryOf(tag)
	if exp <= now {
		return rank{class: classFull, exp: exp}
	}
	var st sluice.State
	t.arr.read(t.kind, i, &st)
	if t.logs != nil {
		st.Log = t.logs[keyOf(e)]
	}
	r, known := rank{class: classRefusing, v: exp}, false
	ls := t.judges.list()
	for j := range ls {
		if rj, ok := judge(&ls[j], &st, now, tag&expMask); ok {
			if !known || r.before(rj) {
				r = rj
			}
			known = true
		}
	}
	r.exp = exp
	return r
}

// judge ranks st under the limit of c, a check of cost 0, at now. It
// reports false when that limit cannot have written st: when the time at
// which it has st back at full quota is not in the second field (an
// entry's expiry bits) says.
func judge(c *sluice.Check, st *sluice.State, now int64, field uint64) (rank, bool) {
	l := &c.Limit
	_, p := l.Decide(*st, now, 0) // a peek: st unchanged
	peek := &p
	if peek.ResetAfter == 0 { // full at now, or before
		return rank{class: classFull}, field <= expField(now)
	}
	if expField(expiry(now, peek)) != field {
		return rank{}, false
	}
	if peek.Remaining > 0 {
		b := l.Burst()
		return rank{class: classUsed, v: (b - peek.Remaining) * shareOne / b}, true
	}
	// Nothing left at once: refused, unless a queue delays the check (a
	// refused check appends nothing to a log).
	_, next := l.Decide(*st, now, 1)
	if next.Allowed {
		return rank{class: classUsed, v: shareOne}, true
	}
	return rank{class: classRefusing, v: expiryAfter(now, int64(next.RetryAfter/time.Microsecond))}, true
}
