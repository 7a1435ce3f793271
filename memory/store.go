package memory

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// Store is an in-memory sluice.Store. State is split over shards by a hash of
// the key. A call on keys the store already holds takes only their entries,
// each with a compare-and-swap and in one fixed order, so the checks of one
// call are atomic together; new keys, sliding logs and the store's upkeep
// take the shards' mutexes, in a fixed order. Store is safe for concurrent
// use. Its zero value is not usable: call New, and Close when done to stop
// the background sweep and the clock's ticker.
//
// The store holds a bounded number of states (WithMaxKeys). To make room
// it evicts only states whose loss admits their keys nothing their limits
// would not have, and refuses a new key rather than free a client its
// limit refuses (see the package doc).
//
// The store never waits on I/O: a decision takes well under a microsecond,
// so it does not consult its context and decides a call whose context is
// done like any other, as sethvargo/go-limiter's memorystore does (and
// x/time/rate's Limiter.Allow takes no context). Reading a request's
// context costs a chain of calls through its layers on every decision, and
// a request whose client has left has still arrived: it counts.
type Store struct {
	clock  *clock
	hasher keyHasher
	// dir holds each shard's listings, side by side (8 bytes a shard): a
	// decider reads one word of it, then the listing and the entry, where
	// a pointer in each shard would cost a line of the shards' array.
	dir      []atomic.Pointer[listings]
	shards   []shard
	mask     uint64
	perShard int

	judges      judgeSet
	evictions   atomic.Int64
	expirations atomic.Int64
	noRoom      atomic.Int64

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type tableKey struct {
	name string
	alg  sluice.Algorithm
}

type shard struct {
	// listed is the shard's slot of Store.dir: the first maxListed of its
	// tables, with their arrays, for deciders without mu. It is replaced
	// whole, under mu, when a table comes, goes or moves to a new array.
	listed *atomic.Pointer[listings]
	mu     sync.Mutex
	tables map[tableKey]*table
	order  []*table  // the tables in the order they were made
	recent [4]*table // the tables of recent checks, most recently added first
	keys   int
	// soonest is a lower bound of the expiry of every state held (µs); a
	// full shard sweeps itself only when it has passed, at most once per
	// sweepGap, so that a flood of live keys does not make every insert
	// scan the shard.
	soonest, swept int64
	_              [24]byte // 128 bytes: shards on separate cache lines (TestShardFillsWholeCacheLines)
}

// listings are a shard's tables as deciders without the shard's mutex find
// them: the first listing's key and array share the first cache line, so
// that a decision reads Store.dir, that line and the entry. (Listings take
// 488 bytes, which the allocator places at a multiple of 512 with no header
// before them: TestShardFillsWholeCacheLines.)
type listings struct {
	n  int
	ls [maxListed]listing
}

// listing is one table in listings.
type listing struct {
	key   tableKey
	kind  stateKind
	order uint32 // the table's judges.order
	arr   array
}

// maxListed is how many of a shard's tables a decider without the mutex
// looks through for its limit's; a check of a later table is decided under
// the mutex (a store rarely holds more limit names than this: a plan's
// per-second, per-minute and per-day limits and a global one are four).
const maxListed = 6

// sweepGap is the least time between two on-demand sweeps of a shard (µs).
const sweepGap = 1000

// Stats counts what the store holds and has let go of.
type Stats struct {
	// Keys is the number of (key, limit) states held now.
	Keys int
	// Evictions counts states dropped, with some of their capacity used, to
	// make room for new keys: each one hands its key back what it had used
	// (never a state that was refusing: see Store).
	Evictions int64
	// Expirations counts states forgotten because they had returned to full
	// quota (by the sweep, or reclaimed by a full shard).
	Expirations int64
	// NoRoom counts checks of new keys refused because their shard was full
	// of states that refuse, none of which may be evicted (see Store).
	NoRoom int64
	// ClockLateTicks counts the times the default clock's ticker ran more
	// than two resolutions after its previous tick (see
	// WithClockResolution): decisions in between decided at a time that
	// old. Zero with WithClock or a resolution of 0.
	ClockLateTicks int64
	// ClockMaxLag is the longest time between two ticks since New: the
	// most any decision's time has lagged the exact time (a refusal's
	// never does).
	ClockMaxLag time.Duration
}

// New returns a Store configured by opts.
func New(opts ...Option) *Store {
	o := defaults()
	for _, opt := range opts {
		opt(&o)
	}
	n := 1 << bits.Len(uint(o.shards-1))
	for n > 1 && o.maxKeys/n < 16 {
		n /= 2 // at least 16 keys a shard: rounding down loses < 1/16
	}
	stop := make(chan struct{})
	s := &Store{
		clock:    newClock(o.clock, o.resolution, stop),
		hasher:   newKeyHasher(),
		dir:      make([]atomic.Pointer[listings], n),
		shards:   make([]shard, n),
		mask:     uint64(n - 1),
		perShard: o.maxKeys / n, // rounded down: together never above maxKeys
		stop:     stop,
		done:     make(chan struct{}),
	}
	for i := range s.shards {
		s.shards[i].tables = make(map[tableKey]*table)
		s.shards[i].listed = &s.dir[i]
	}
	if o.sweepInterval > 0 {
		go s.sweepEvery(o.sweepInterval)
	} else {
		close(s.done)
	}
	return s
}

// Close stops the background sweep and the clock's ticker (see
// WithClockResolution). The store still answers afterwards, reading the
// clock for every decision.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.clock.close()
		close(s.stop)
	})
	<-s.done
	return nil
}

// Stats returns the current counts.
func (s *Store) Stats() Stats {
	st := Stats{
		Evictions:      s.evictions.Load(),
		Expirations:    s.expirations.Load(),
		NoRoom:         s.noRoom.Load(),
		ClockLateTicks: s.clock.lateTicks.Load(),
		ClockMaxLag:    time.Duration(s.clock.maxGap.Load()) * time.Microsecond,
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		st.Keys += sh.keys
		sh.mu.Unlock()
	}
	return st
}

// now is the time for upkeep: it may lag (see clock).
func (s *Store) now() int64 { return s.clock.now() }

// keyHash returns key's identity (see keyHasher).
func (s *Store) keyHash(key string) hash { return s.hasher.of(key) }

func (s *Store) shardIndex(h hash) uint32 { return uint32((h.h1 >> 1) & s.mask) }

// Apply implements sluice.Store. It never fails, and ctx is not consulted
// (see Store).
func (s *Store) Apply(_ context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.apply(checks, out)
	return nil
}

// apply decides checks and returns the time of the decision in µs since
// sluice.Epoch, by the store's clock (the one of WithClock, else the wall
// time at New plus the monotonic time since).
//
// A call is decided holding only the entries of its states when the store
// holds every one of them in a table its shard lists, none of them a
// sliding log (applyHeld), else under the mutexes of their shards
// (applyLocked).
func (s *Store) apply(checks []sluice.Check, out []sluice.Status) int64 {
	// Scratch space for the call's checks: as much as a call of one check
	// needs, else of up to 8, else allocated.
	switch n := len(checks); {
	case n == 1:
		var (
			hashes [1]hash
			idx    [1]uint32
			held   [1]heldCheck
			order  [1]int
			states [1]sluice.State
		)
		return s.applyIn(checks, out, hashes[:], idx[:], held[:], order[:0], states[:])
	case n <= 8:
		var (
			hashes [8]hash
			idx    [8]uint32
			held   [8]heldCheck
			order  [8]int
			states [8]sluice.State
		)
		return s.applyIn(checks, out, hashes[:n], idx[:n], held[:n], order[:0], states[:n])
	default:
		return s.applyIn(checks, out, make([]hash, n), make([]uint32, n), make([]heldCheck, n), make([]int, 0, n), make([]sluice.State, n))
	}
}

// applyIn is apply with scratch space of len(checks) (order: of that
// capacity).
func (s *Store) applyIn(checks []sluice.Check, out []sluice.Status, hashes []hash, idx []uint32, held []heldCheck, order []int, states []sluice.State) int64 {
	for i := range checks {
		if i > 0 && checks[i].Key == checks[i-1].Key {
			hashes[i] = hashes[i-1] // a plan's limits of one subject: hash it once
		} else {
			hashes[i] = s.keyHash(checks[i].Key)
		}
		idx[i] = s.shardIndex(hashes[i])
	}
	if now, ok := s.applyHeld(checks, out, hashes, idx, held, order, states); ok {
		return now
	}
	return s.applyLocked(checks, out, hashes, idx, states)
}

// heldCheck is where applyHeld finds one check's state.
type heldCheck struct {
	ls   *listing
	slot int
	e    *entry
	tag  uint64 // the entry's tag as taken, then as to be released
}

// applyHeld decides checks holding their entries only, and reports false,
// having changed nothing, when one of them is not to be decided so (a new
// key, a sliding log, a table its shard does not list, an entry the
// shard's owner holds). held and states are scratch space of len(checks),
// order empty with that capacity.
func (s *Store) applyHeld(checks []sluice.Check, out []sluice.Status, hashes []hash, idx []uint32, held []heldCheck, order []int, states []sluice.State) (int64, bool) {
	now, lagged := s.clock.nowFor(checks)
	for i := range checks {
		ls := s.lookup(idx[i], &checks[i].Limit)
		if ls == nil || ls.kind == kindLog {
			return 0, false
		}
		slot, ok := find(ls.arr.es, hashes[i])
		if !ok {
			return 0, false
		}
		held[i] = heldCheck{ls: ls, slot: slot, e: &ls.arr.es[slot]}
		// The entries are taken in entryOrder, each once: two calls
		// never wait for each other in a cycle.
		order = insertInOrder(order, held, hashes, i)
	}
	for k, i := range order {
		h := &held[i]
		if k > 0 && held[order[k-1]].e == h.e {
			h.tag = held[order[k-1]].tag // the same state twice
		} else {
			tag, ok := h.e.acquire(hashes[i])
			if !ok {
				releaseHeld(held, order[:k])
				return 0, false
			}
			h.tag = tag
		}
		h.ls.arr.read(h.ls.kind, h.slot, &states[i])
	}
	changed := sluice.DecideBatch(checks, states, now, out)
	if lagged && refused(out) {
		now = s.clock.exact()
		readHeld(held, states)
		changed = sluice.DecideBatch(checks, states, now, out)
	}
	if changed {
		for i := range held {
			h := &held[i]
			h.ls.arr.write(h.ls.kind, h.slot, &states[i])
			h.tag = hashes[i].tag(expiry(now, &out[i]))
		}
	}
	releaseHeld(held, order)
	return now, true
}

// readHeld reads the states of held, whose entries the caller holds.
func readHeld(held []heldCheck, states []sluice.State) {
	for i := range held {
		h := &held[i]
		h.ls.arr.read(h.ls.kind, h.slot, &states[i])
	}
}

// insertInOrder adds i to order, the indexes of held sorted by entryOrder
// (the indexes of one entry in ascending order), moving it down past the
// indexes it goes before.
func insertInOrder(order []int, held []heldCheck, hashes []hash, i int) []int {
	order = append(order, i)
	for k := len(order) - 1; k > 0 && entryOrder(held, hashes, i, order[k-1]); k-- {
		order[k], order[k-1] = order[k-1], i
	}
	return order
}

// entryOrder reports whether the entry of check i is taken before that of
// check j: by key hash, then the order in which the store first met their
// tables' limit name and algorithm (judges.order). Two entries are equal
// in it only when they are the same entry (a key's hash picks its shard,
// the name and algorithm its table there), so it orders every entry of
// the store one way for every call.
func entryOrder(held []heldCheck, hashes []hash, i, j int) bool {
	a, b := hashes[i], hashes[j]
	if a.h1 != b.h1 {
		return a.h1 < b.h1
	}
	if a.h2 != b.h2 {
		return a.h2 < b.h2
	}
	return held[i].ls.order < held[j].ls.order
}

// releaseHeld releases the entries of order (indexes of held sorted by
// entryOrder), each once, with the tag of its last check.
func releaseHeld(held []heldCheck, order []int) {
	for k, i := range order {
		if k+1 == len(order) || held[order[k+1]].e != held[i].e {
			held[i].e.release(held[i].tag)
		}
	}
}

// applyLocked decides checks under the mutexes of their shards.
//
// An admitted call's new keys are inserted after its held states are
// stored and let go, as an insert may move entries. When the new keys of
// its enforcing checks do not fit in their shards, the call first lets its
// states go, makes room (eviction moves entries too) and decides again; if
// only refusing states could make that room, the call is refused and
// changes nothing.
func (s *Store) applyLocked(checks []sluice.Check, out []sluice.Status, hashes []hash, idx []uint32, states []sluice.State) int64 {
	n := len(checks)
	var (
		tableBuf  [8]*table
		slotBuf   [8]int
		heldBuf   [8]bool
		takenBuf  [8]bool
		lockedBuf [8]uint32
	)
	var (
		tables []*table
		slots  []int
		held   []bool
		taken  []bool
		locked []uint32
	)
	if n <= len(tableBuf) {
		tables, slots, held, taken, locked = tableBuf[:n], slotBuf[:n], heldBuf[:n], takenBuf[:n], lockedBuf[:0]
	} else {
		tables, slots, held, taken, locked = make([]*table, n), make([]int, n), make([]bool, n), make([]bool, n), make([]uint32, 0, n)
	}
	for i := range checks {
		locked = insertSorted(locked, idx[i])
	}
	for _, k := range locked { // ascending order: no deadlock between calls
		s.shards[k].mu.Lock()
	}
	for i := range checks {
		tables[i] = s.shards[idx[i]].table(&checks[i].Limit, &s.judges)
	}
	var (
		now     int64
		changed bool
	)
	for made := false; ; made = true {
		for i := range checks {
			slots[i], taken[i], held[i] = tables[i].hold(hashes[i])
		}
		loadHeld(tables, slots, hashes, held, states)
		var lagged bool
		now, lagged = s.clock.nowFor(checks) // after the wait for the mutexes
		changed = sluice.DecideBatch(checks, states, now, out)
		if lagged && refused(out) {
			now = s.clock.exact()
			loadHeld(tables, slots, hashes, held, states)
			changed = sluice.DecideBatch(checks, states, now, out)
		}
		if !changed || made || s.fits(checks, states, held, idx, locked) {
			break
		}
		letGoTaken(tables, slots, taken)
		at := now
		if lagged {
			at = s.clock.exact()
		}
		if s.makeRoomFor(checks, states, held, idx, locked, hashes, at, out) {
			continue
		}
		// Refused for want of room: the other checks report their states
		// as a peek would.
		for i := range checks {
			slots[i], taken[i], held[i] = tables[i].hold(hashes[i])
		}
		loadHeld(tables, slots, hashes, held, states)
		now, changed = at, false
		for i := range checks {
			if out[i].Allowed {
				_, out[i] = checks[i].Limit.Decide(states[i], now, 0)
			}
		}
		break
	}
	for i := range checks { // existing keys first: inserts may move entries
		if held[i] && changed {
			tables[i].store(slots[i], hashes[i], &states[i], expiry(now, &out[i]))
		}
	}
	letGoTaken(tables, slots, taken)
	if changed {
		// Enforcing checks first: room was made for them.
		for _, shadow := range [2]bool{false, true} {
			for i := range checks {
				if !held[i] && !isZero(&states[i]) && checks[i].Limit.Shadow() == shadow {
					sh := &s.shards[idx[i]]
					sh.insert(s, tables[i], hashes[i], &states[i], expiry(now, &out[i]), now, hashes, !shadow)
				}
			}
		}
	}
	for _, k := range locked {
		s.shards[k].mu.Unlock()
	}
	return now
}

// letGoTaken lets go of the entries taken (see table.hold).
func letGoTaken(tables []*table, slots []int, taken []bool) {
	for i := range tables {
		if taken[i] {
			tables[i].arr.es[slots[i]].letGo()
		}
	}
}

// enforcingNew reports whether check i of an admitted call, whose state
// after the decision is states[i], is an enforcing check that inserts a
// new key.
func enforcingNew(checks []sluice.Check, states []sluice.State, held []bool, i int) bool {
	return !held[i] && !isZero(&states[i]) && !checks[i].Limit.Shadow()
}

// newKeys returns how many enforcing checks of an admitted call insert a
// new key into shard k (see enforcingNew).
func newKeys(checks []sluice.Check, states []sluice.State, held []bool, idx []uint32, k uint32) int {
	n := 0
	for i := range checks {
		if idx[i] == k && enforcingNew(checks, states, held, i) {
			n++
		}
	}
	return n
}

// fits reports whether every shard of an admitted call (locked) can take
// the new keys of its enforcing checks without evicting.
func (s *Store) fits(checks []sluice.Check, states []sluice.State, held []bool, idx, locked []uint32) bool {
	for _, k := range locked {
		if n := newKeys(checks, states, held, idx, k); n > 0 && s.shards[k].keys+n > s.perShard {
			return false
		}
	}
	return true
}

// makeRoomFor makes room in every shard of an admitted call (locked),
// whose states are let go, for the new keys of its enforcing checks,
// judging states at at. It reports false when some shard could not make
// it, having written the refusal of those checks into out.
func (s *Store) makeRoomFor(checks []sluice.Check, states []sluice.State, held []bool, idx, locked []uint32, protect []hash, at int64, out []sluice.Status) bool {
	ok := true
	for _, k := range locked {
		n := newKeys(checks, states, held, idx, k)
		if n == 0 {
			continue
		}
		until, made := s.shards[k].makeRoom(s, at, n, protect)
		if made {
			continue
		}
		ok = false
		for i := range checks {
			if idx[i] == k && enforcingNew(checks, states, held, i) {
				refuseNoRoom(&out[i], at, until)
				s.noRoom.Add(1)
			}
		}
	}
	return ok
}

// loadHeld loads into states[i] the state at slots[i] of tables[i] when
// held[i], else a fresh state.
func loadHeld(tables []*table, slots []int, hashes []hash, held []bool, states []sluice.State) {
	for i := range states {
		states[i] = sluice.State{}
		if held[i] {
			tables[i].load(slots[i], hashes[i], &states[i])
		}
	}
}

// refused reports whether a check of a call refused. A call refused at a
// time the clock lags by is decided again at the exact time, so the lag
// never refuses a call (see clock); its states must be read afresh for
// that, as a refusal may have changed them.
func refused(out []sluice.Status) bool {
	for i := range out {
		if !out[i].Allowed {
			return true
		}
	}
	return false
}

// insertSorted adds v to the ascending set xs.
func insertSorted(xs []uint32, v uint32) []uint32 {
	i := len(xs)
	for i > 0 && xs[i-1] > v {
		i--
	}
	if i > 0 && xs[i-1] == v {
		return xs
	}
	xs = append(xs, 0)
	copy(xs[i+1:], xs[i:])
	xs[i] = v
	return xs
}

func isZero(st *sluice.State) bool { return st.T == 0 && st.A == 0 && st.B == 0 && len(st.Log) == 0 }

// expiry returns when a state whose status is st becomes equivalent to a
// fresh one.
func expiry(now int64, st *sluice.Status) int64 {
	return expiryAfter(now, int64(st.ResetAfter/time.Microsecond))
}

// expiryAfter returns when a state back to full quota in resetUS µs from now
// becomes equivalent to a fresh one.
func expiryAfter(now, resetUS int64) int64 { return now + min(resetUS, 1<<62) }

// table returns the shard's table for l, creating it, and notes l's
// parameters in js (see table.rank).
//
// A plan's few limits meet the same shard again and again: the tables of
// the last few checks are kept at hand, so that most calls find theirs by
// comparing names (the same string, usually: one pointer comparison)
// instead of hashing the name for the map. A table found there stays where
// it is (a plan of up to 4 limits then moves nothing); one from the map
// goes first, pushing out the last.
func (sh *shard) table(l *sluice.Limit, js *judgeSet) *table {
	k := tableKey{l.ID(), l.Algorithm()}
	for _, t := range &sh.recent {
		if t != nil && t.key == k {
			t.judges.note(js, l)
			return t
		}
	}
	t := sh.tables[k]
	if t == nil {
		t = newTable(*l, js.of(k, l))
		sh.tables[k] = t
		sh.order = append(sh.order, t)
		sh.list()
	}
	t.judges.note(js, l)
	copy(sh.recent[1:], sh.recent[:len(sh.recent)-1])
	sh.recent[0] = t
	return t
}

// lookup returns shard i's listing of the table for l, or nil if it has
// none among the first maxListed; it needs no mutex.
func (s *Store) lookup(i uint32, l *sluice.Limit) *listing {
	ls := s.dir[i].Load()
	if ls == nil {
		return nil
	}
	k := tableKey{l.ID(), l.Algorithm()}
	for j := range min(ls.n, maxListed) {
		if ls := &ls.ls[j]; ls.key == k {
			return ls
		}
	}
	return nil
}

// list lists the shard's first maxListed tables again; the caller holds
// sh.mu and calls it whenever a table comes, goes or moves to a new array.
func (sh *shard) list() {
	next := new(listings)
	for _, t := range sh.order {
		if next.n == maxListed {
			break
		}
		next.ls[next.n] = listing{key: t.key, kind: t.kind, order: t.judges.order, arr: t.arr}
		next.n++
	}
	sh.listed.Store(next)
}

// drop forgets t, which has left sh.tables, from the shard's order and
// listings.
func (sh *shard) drop(t *table) {
	for i, o := range sh.order {
		if o == t {
			sh.order = append(sh.order[:i], sh.order[i+1:]...)
			break
		}
	}
	sh.list()
}

// insert adds h to t, with state st expiring at exp, first making room if
// the shard is full: it forgets the shard's expired states (at most once
// per sweepGap), else evicts (see makeRoom), at time at. The states of the
// keys in protect (the call being decided) are never evicted. It reports
// false, having added nothing, when only refusing states could make room,
// with the time at which the one that stopped it stops refusing; unless
// must, when it adds h above the bound.
func (sh *shard) insert(s *Store, t *table, h hash, st *sluice.State, exp, at int64, protect []hash, must bool) (until int64, ok bool) {
	if until, ok := sh.makeRoom(s, at, 1, protect); !ok && !must {
		return until, false
	}
	if t.insert(h, st, exp) {
		sh.list()
	}
	sh.keys++
	sh.soonest = min(sh.soonest, exp)
	return 0, true
}
