package memory

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// maxJudges bounds the parameter sets the store keeps to rank the states
// of one limit ID and algorithm by (see rankState): limits that differ
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
		a.Burst() == b.Burst() && a.MaxWait() == b.MaxWait() &&
		a.Period() == b.Period() && a.Offset() == b.Offset()
}

// limitKey names the states of one limit in the store: a Check's
// Limit.ID and algorithm (see sluice.Limit.WithID).
type limitKey struct {
	id  string
	alg sluice.Algorithm
}

// limitRef is what the store knows of one limit ID and algorithm: the
// number its states carry in their slots, where its states live, and the
// parameter sets it has been decided under, to rank its states by.
type limitRef struct {
	key  limitKey
	ref  uint32 // 1 + how many limit IDs and algorithms the store met before
	kind stateKind
	// judges are the parameter sets, the most recently noted first, at
	// most maxJudges: a list replaced whole, of checks of cost 0 (peeks)
	// under each.
	judges atomic.Pointer[[]sluice.Check]
}

// firstKnown is how many limits a call looks through before it hashes
// the limit's ID to find it (a store rarely holds more: a plan's
// per-second, per-minute and per-day limits and a global one are four).
const firstKnown = 8

// registry numbers the limits the store meets, up to max of them. It
// never forgets one: a limit's number is in the slots of its states.
// Meeting a new limit costs the same however many it knows.
type registry struct {
	mu   sync.Mutex
	snap atomic.Pointer[known] // replaced whole under mu
	max  int                   // see WithMaxLimits
}

// known is the registry as deciders read it, without its mutex.
type known struct {
	first [firstKnown]*limitRef
	table *refTable
	// byRef holds the refs by ref-1. Appended to under mu: the elements
	// a reader's snapshot has are never written again.
	byRef []*limitRef
}

// refTable finds limitRefs by limitKey without a lock: an open-addressing
// table whose slots are only ever filled, atomically and under the
// registry's mutex, at most half of them; a fuller one is replaced by one
// twice its size. A reader of a table since replaced misses only the
// limits added after it, which the caller then notes under the mutex.
type refTable struct {
	seed  maphash.Seed
	mask  uint64
	slots []atomic.Pointer[limitRef]
}

func newRefTable(size int, seed maphash.Seed) *refTable {
	return &refTable{seed: seed, mask: uint64(size - 1), slots: make([]atomic.Pointer[limitRef], size)}
}

func (t *refTable) home(k limitKey) uint64 {
	return (maphash.String(t.seed, k.id) ^ uint64(k.alg)*0x9e3779b97f4a7c15) & t.mask
}

// find returns the limitRef of k, or nil.
func (t *refTable) find(k limitKey) *limitRef {
	for i := t.home(k); ; i = (i + 1) & t.mask {
		lr := t.slots[i].Load()
		if lr == nil || lr.key == k {
			return lr
		}
	}
}

// put adds lr, whose key t does not hold and which leaves t at most half
// full; the caller holds the registry's mutex.
func (t *refTable) put(lr *limitRef) {
	i := t.home(lr.key)
	for t.slots[i].Load() != nil {
		i = (i + 1) & t.mask
	}
	t.slots[i].Store(lr)
}

// find returns the limitRef of l, or nil if the store has not met l's ID
// and algorithm.
func (r *registry) find(l *sluice.Limit) *limitRef {
	kn := r.snap.Load()
	if kn == nil {
		return nil
	}
	k := limitKey{l.ID(), l.Algorithm()}
	for _, lr := range &kn.first {
		if lr == nil {
			return nil
		}
		if lr.key == k {
			return lr
		}
	}
	return kn.table.find(k)
}

// of returns the ref of ref's limit (nil for a number the registry never
// gave).
func (r *registry) of(ref uint32) *limitRef {
	kn := r.snap.Load()
	if kn == nil || ref == 0 || int(ref) > len(kn.byRef) {
		return nil
	}
	return kn.byRef[ref-1]
}

// note returns the limitRef of l, making it if the store has not met l's
// ID and algorithm, with l's parameters among its judges. It returns nil
// when l is new and the registry knows as many limits as it may.
func (r *registry) note(l *sluice.Limit) *limitRef {
	lr := r.find(l)
	if lr == nil {
		if lr = r.add(l); lr == nil {
			return nil
		}
	}
	if !lr.has(l) {
		r.mu.Lock()
		lr.note(l)
		r.mu.Unlock()
	}
	return lr
}

// count returns how many limits the registry knows.
func (r *registry) count() int {
	if kn := r.snap.Load(); kn != nil {
		return len(kn.byRef)
	}
	return 0
}

// add makes the limitRef of l unless another call has, or returns nil
// when the registry knows as many limits as it may.
func (r *registry) add(l *sluice.Limit) *limitRef {
	r.mu.Lock()
	defer r.mu.Unlock()
	if lr := r.find(l); lr != nil {
		return lr
	}
	old := r.snap.Load()
	if old == nil {
		old = &known{}
	}
	if len(old.byRef) >= r.max {
		return nil
	}
	lr := &limitRef{key: limitKey{l.ID(), l.Algorithm()}, ref: uint32(len(old.byRef) + 1), kind: kindOf(l.Algorithm())}
	lr.judges.Store(&[]sluice.Check{{Limit: *l}})
	next := &known{first: old.first, table: old.table, byRef: append(old.byRef, lr)}
	if n := len(old.byRef); n < firstKnown {
		next.first[n] = lr
	}
	t := next.table
	grow := t == nil || 2*len(next.byRef) > len(t.slots)
	if grow {
		size, seed := 16, maphash.MakeSeed()
		if t != nil {
			size, seed = 2*len(t.slots), t.seed
		}
		next.table = newRefTable(size, seed)
		for _, x := range next.byRef {
			next.table.put(x)
		}
	}
	r.snap.Store(next)
	if !grow {
		// Only once the snapshot that numbers lr is published: whoever
		// finds lr may write states of its number, which the store's
		// upkeep looks up (of).
		t.put(lr)
	}
	return lr
}

// list returns the peeks under each parameter set; the caller must not
// modify them.
func (lr *limitRef) list() []sluice.Check { return *lr.judges.Load() }

// note adds l's parameters to lr unless it has them; beyond maxJudges the
// least recently added are forgotten, and the states only they can have
// written then rank as refusing. The caller holds the registry's mutex.
func (lr *limitRef) note(l *sluice.Limit) {
	if lr.has(l) {
		return
	}
	old := lr.list()
	next := make([]sluice.Check, 1, min(len(old)+1, maxJudges))
	next[0].Limit = *l
	next = append(next, old[:min(len(old), maxJudges-1)]...)
	lr.judges.Store(&next)
}

func (lr *limitRef) has(l *sluice.Limit) bool {
	ls := lr.list()
	for i := range ls {
		if sameParams(&ls[i].Limit, l) {
			return true
		}
	}
	return false
}

// rankState ranks st, a state of lr expiring at secs (see expSecs), at
// now.
//
// A state whose limits differ (two plans, or degradation levels) is ranked
// by the limits that may have written it: every decision that changes a
// state keeps in its slot when the state is back at full quota, a time
// that under the writer's limit does not move as time passes, so a limit
// that puts that time elsewhere did not write it. Of those that may have,
// the latest rank counts; a state none of them can have written ranks as
// refusing until its expiry.
func rankState(lr *limitRef, st *sluice.State, secs uint64, now int64) rank {
	exp := secsExpiry(secs)
	if exp <= now {
		return rank{class: classFull, exp: exp}
	}
	r, known := rank{class: classRefusing, v: exp}, false
	if lr != nil {
		ls := lr.list()
		for j := range ls {
			if rj, ok := judge(&ls[j], st, now, secs); ok {
				if !known || r.before(rj) {
					r = rj
				}
				known = true
			}
		}
	}
	r.exp = exp
	return r
}

// judge ranks st under the limit of c, a check of cost 0, at now. It
// reports false when that limit cannot have written st: when the time at
// which it has st back at full quota is not the second secs says. (The
// registry holds valid limits only: see applyLocked.)
func judge(c *sluice.Check, st *sluice.State, now int64, secs uint64) (rank, bool) {
	l := &c.Limit
	_, p, err := l.Decide(*st, now, 0) // a peek: st unchanged
	if err != nil {
		return rank{}, false
	}
	peek := &p
	if peek.ResetAfter == 0 { // full at now, or before
		return rank{class: classFull}, secs <= expSecs(now)
	}
	if expSecs(expiry(now, peek)) != secs {
		return rank{}, false
	}
	if peek.Remaining > 0 {
		b := l.Burst()
		return rank{class: classUsed, v: (b - peek.Remaining) * shareOne / b}, true
	}
	// Nothing left at once: refused, unless a queue delays the check (a
	// refused check appends nothing to a log).
	_, next, err := l.Decide(*st, now, 1)
	if err != nil || next.Allowed {
		return rank{class: classUsed, v: shareOne}, true
	}
	return rank{class: classRefusing, v: expiryAfter(now, int64(next.RetryAfter/time.Microsecond))}, true
}
