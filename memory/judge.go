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
// in quantity, window, burst, max wait or calendar offset, as the plans of
// a policy, the keys with a quota of their own and the degradation levels
// make them.
const maxJudges = 64

// maxExtraJudges bounds the parameter sets the store keeps beyond the first
// of each limit, all limits together, so that the sets it keeps take a
// bounded memory (about 200 bytes each) however many limits it knows.
const maxExtraJudges = 1 << 16

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
	// classUsed: some capacity used, and a check of cost 1 fits now, or
	// the state is of a limit decided only in shadow mode for a window,
	// which refuses no one.
	classUsed
	// classRefusing: a check of cost 1 is refused now, a lease book holds
	// a lease that has not expired, or the state was written under
	// parameters the store does not know (it may refuse); and its limit
	// is decided in enforcing mode (see rankState).
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
// parameter sets it has been decided under and when last in enforcing
// mode, to rank its states by.
type limitRef struct {
	key  limitKey
	ref  uint32 // 1 + how many limit IDs and algorithms the store met before
	kind stateKind
	// enforcedAt is when a check of the limit in enforcing mode was last
	// noted, before it was decided, on every path that decides (see
	// noteMode), as a noteTime; 0 while none has been. It is written at
	// most about once every modeNoteEvery, so it may be up to that much
	// older than the latest such check.
	enforcedAt atomic.Uint64
	// enforcedWindow is the longest Window (µs) of the checks whose time
	// enforcedAt has noted: their parameters may be ones the store does
	// not keep (see rankState).
	enforcedWindow atomic.Int64
	// judges are the parameter sets met, at most maxJudges, replaced
	// whole (under the registry's mutex) when one is added.
	judges atomic.Pointer[judgeSet]
	// beyond is what the parameter sets met beyond those kept may have
	// written (see registry.noteBeyond): empty while every set met is
	// kept.
	beyond beyond
	// window is the longest Window (µs) of the parameter sets a call has
	// been decided under, kept or not, under a shard's mutex or holding
	// only its keys' entries (see noteWindow): a state of lr may count a
	// receipt given under any of them, for as long as that window says.
	window atomic.Int64
}

// judgeSet is the parameter sets of one limit ID and algorithm, in the
// order the store met them: checks of cost 0 (peeks) under each, found by
// a fingerprint of their parameters.
type judgeSet struct {
	// list is appended to in place when its capacity allows: a set that
	// a reader's judgeSet does not hold is written beyond its length.
	list []sluice.Check
	// index is an open-addressing table, of a power-of-two size at least
	// twice len(list), of 1 + the position in list of each set, at the
	// place its fingerprint names (0: empty).
	index []uint16
}

// newJudgeSet returns the judgeSet of list.
func newJudgeSet(list []sluice.Check) *judgeSet {
	size := 4
	for size < 2*len(list) {
		size *= 2
	}
	js := &judgeSet{list: list, index: make([]uint16, size)}
	mask := uint64(size - 1)
	for n := range list {
		i := fingerprint(&list[n].Limit) & mask
		for js.index[i] != 0 {
			i = (i + 1) & mask
		}
		js.index[i] = uint16(n + 1)
	}
	return js
}

// has reports whether js holds l's parameters.
func (js *judgeSet) has(l *sluice.Limit) bool {
	mask := uint64(len(js.index) - 1)
	for i := fingerprint(l) & mask; ; i = (i + 1) & mask {
		n := js.index[i]
		if n == 0 {
			return false
		}
		if sameParams(&js.list[n-1].Limit, l) {
			return true
		}
	}
}

// fingerprint mixes the parameters that sameParams compares: limits of
// the same parameters have the same fingerprint.
func fingerprint(l *sluice.Limit) uint64 {
	h := uint64(l.Quantity())
	for _, v := range [...]int64{int64(l.Window()), l.Burst(), int64(l.MaxWait()), int64(l.Period()), int64(l.Offset())} {
		h = (h ^ uint64(v)) * 0x9e3779b97f4a7c15
		h ^= h >> 29
	}
	return h
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
	// extra counts the parameter sets kept beyond each limit's first (at
	// most maxExtraJudges); added to under mu.
	extra atomic.Int64
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
// ID and algorithm, with l's parameters among its judges if there is room
// for them (see limitRef.note). It returns nil when l is new and the
// registry knows as many limits as it may. For a limit and parameters it
// has met, it takes no lock and allocates nothing; nor for parameters it
// has no room for, unless they change what it notes of them (see
// noteBeyond).
func (r *registry) note(l *sluice.Limit) *limitRef {
	lr := r.find(l)
	if lr == nil {
		if lr = r.add(l); lr == nil {
			return nil
		}
	}
	lr.noteWindow(l)
	if !lr.has(l) {
		kept := false
		if r.roomFor(lr) {
			r.mu.Lock()
			if kept = lr.has(l); !kept && r.roomFor(lr) {
				lr.note(l)
				r.extra.Add(1)
				kept = true
			}
			r.mu.Unlock()
		}
		if !kept {
			r.noteBeyond(lr, l)
		}
	}
	return lr
}

// roomFor reports whether the registry may keep one more parameter set of
// lr.
func (r *registry) roomFor(lr *limitRef) bool {
	return len(lr.list()) < maxJudges && r.extra.Load() < maxExtraJudges
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
	lr.judges.Store(newJudgeSet([]sluice.Check{{Limit: *l}}))
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
func (lr *limitRef) list() []sluice.Check { return lr.judges.Load().list }

// note adds l's parameters, which lr does not have, to lr. The caller
// holds the registry's mutex and has checked that there is room for them
// (see registry.roomFor). The sets a limit is met under beyond that room
// are not kept, so that meeting them on every call takes no lock: the
// store notes their windows and least quantities, or their shortest
// refill, instead (see registry.noteBeyond).
func (lr *limitRef) note(l *sluice.Limit) {
	lr.judges.Store(newJudgeSet(append(lr.list(), sluice.Check{Limit: *l})))
}

func (lr *limitRef) has(l *sluice.Limit) bool { return lr.judges.Load().has(l) }

// noteWindow records, before a state a check of l (a valid limit of lr)
// decides is written, its window among those of lr's parameter sets (see
// limitRef.window), on every path that decides: the notes of the states lr forgets that still
// counted something last as long as the longest of them (see
// shard.noteEvicted). It takes no lock and allocates nothing, and writes
// only for a window longer than any met before.
func (lr *limitRef) noteWindow(l *sluice.Limit) {
	if w := int64(l.Window() / time.Microsecond); w > lr.window.Load() {
		raiseTo(&lr.window, w)
	}
}

// modeNoteEvery is how often, at most, the time of a limit's latest
// enforcing check is written: more often than that, a check reads it only.
const modeNoteEvery = int64(time.Second / time.Microsecond)

// modeSlack is how much longer than its longest window a limit's states
// may refuse after its latest enforcing check noted: modeNoteEvery, and as
// much again for a decision time that lags the clock (see clock).
const modeSlack = 2 * modeNoteEvery

// noteTime is t (µs since sluice.Epoch) as an unsigned count of µs since
// math.MinInt64 µs: in the same order, with 0 free to mean never.
func noteTime(t int64) uint64 { return uint64(t) ^ 1<<63 }

// noteMode records, before a check of l (a limit of lr) decided at now is
// decided, whether the check enforces: if so, lr's states may refuse
// clients for a window from now (see enforcing). It takes no lock and, on
// all but about one enforcing check a modeNoteEvery, loads only: it writes
// when the time noted is at least modeNoteEvery before now, and never
// moves that time back (a clock that steps back).
func (lr *limitRef) noteMode(l *sluice.Limit, now int64) {
	if l.Shadow() {
		return
	}
	t := noteTime(now)
	if at := lr.enforcedAt.Load(); t <= at || t-at < uint64(modeNoteEvery) {
		return
	}
	w := int64(l.Window() / time.Microsecond)
	for old := lr.enforcedWindow.Load(); w > old && !lr.enforcedWindow.CompareAndSwap(old, w); {
		old = lr.enforcedWindow.Load()
	}
	lr.enforcedAt.Store(t)
}

// enforcing reports whether lr's states that refuse a check refuse clients
// at now: whether a check of lr in enforcing mode was noted within the
// longest window and modeSlack before now, of window (µs, the longest
// among lr's parameter sets kept, windows noted beyond them and debts the
// bucket sets beyond them may write) and the longest of the enforcing
// checks noted. A window of -1 (the state was written under parameters
// the store does not keep) makes it report whether one ever was: such a
// state ranks by its expiry.
func (lr *limitRef) enforcing(now, window int64) bool {
	at := lr.enforcedAt.Load()
	switch t := noteTime(now); {
	case at == 0:
		return false
	case window < 0 || t <= at:
		return true
	default:
		span := max(window, lr.enforcedWindow.Load()) + modeSlack
		return t-at <= uint64(span)
	}
}

// rankState ranks st, a state of lr expiring at secs (see expSecs), at
// now.
//
// A state whose limits differ (two plans, or degradation levels) is ranked
// by the limits that may have written it: every decision that changes a
// state keeps in its slot when the state is back at full quota, a time
// that under the writer's limit does not move as time passes, so a limit
// that puts that time elsewhere did not write it. (A call that refuses a
// state moves that time later, never earlier, to its own limit's: that
// limit then counts as its writer.) Of those that may have, the latest
// rank counts; a state none of them can have written ranks as refusing
// until its expiry. The sets lr has been met under and does not keep
// count among them as noteBeyond notes them: a window noted, by the least
// quantity met under it, for the states it may have written (see
// beyondWindow.judge); the sets not told apart by window, and a bucket's,
// for every state some set judges used (see rankBeyond).
//
// A state of a limit not decided in enforcing mode within the longest
// window of its parameter sets kept or noted, or the longest debt a bucket
// set noted may write (and modeSlack), refuses no one, whatever its count:
// where it would rank as refusing, it ranks as used up (classUsed, all of
// its capacity), so that it never keeps a newcomer out.
// So do the states of a limit only ever decided in shadow mode, and those
// of one rolled back from enforcing to shadow mode once a window has
// passed. An enforcing check is noted before it is decided (see
// noteMode): a state that check writes, or finds at its limit, ranks as
// refusing from then on, for a window at least. A state none of the sets
// can have written ranks as refusing if the limit was ever decided in
// enforcing mode.
func rankState(lr *limitRef, st *sluice.State, secs uint64, now int64) rank {
	exp := secsExpiry(secs)
	if exp <= now {
		return rank{class: classFull, exp: exp}
	}
	r, known := rank{class: classRefusing, v: exp}, false
	if lr != nil {
		ls, window, by := lr.list(), int64(0), (*sluice.Check)(nil)
		for j := range ls {
			window = max(window, int64(ls[j].Limit.Window()/time.Microsecond))
			if rj, ok := judge(&ls[j], st, now, secs); ok {
				if !known || r.before(rj) {
					r, by = rj, &ls[j]
				}
				known = true
			}
		}
		if bw := lr.beyond.windows.Load(); bw != nil {
			for i := range bw.n {
				w := &bw.win[i]
				window = max(window, int64(w.peek.Limit.Window()/time.Microsecond))
				if rj, ok := w.judge(st, now, secs, exp); ok {
					if !known || r.before(rj) {
						r, by = rj, &w.peek
					}
					known = true
				}
			}
		}
		// A bucket set beyond those kept may refuse a state for as long
		// as the debt it writes, which no window above bounds.
		window = max(window, lr.beyond.owes.Load())
		if !known {
			window = -1
		} else if r.class == classUsed {
			r = lr.rankBeyond(r, by, st, now, exp)
		}
		if r.class == classRefusing && !lr.enforcing(now, window) {
			r = rank{class: classUsed, v: shareOne}
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
	if l.Algorithm() == sluice.AlgorithmConcurrency {
		// Leases in flight, however many are free: evicting the book would
		// let its key hold them and Quantity more at once. It may go once
		// the last of them expires.
		return rank{class: classRefusing, v: expiry(now, peek)}, true
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
