// Package memory is sluice's in-process Store: sharded, bounded in the number
// of keys it holds, and free of allocations when it decides for a key it
// already holds.
package memory

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sluice-dev/sluice"
)

// Store is an in-memory sluice.Store. State is split over shards by a hash of
// the key. A call on keys the store already holds takes only their entries,
// each with a compare-and-swap and in address order, so the checks of one
// call are atomic together; new keys, sliding logs and the store's upkeep
// take the shards' mutexes, in a fixed order. Store is safe for concurrent
// use. Its zero value is not usable: call New, and Close when done to stop
// the background sweep and the clock's ticker.
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

	evictions   atomic.Int64
	expirations atomic.Int64

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type tableKey struct {
	name string
	alg  sluice.Algorithm
}

// is reports whether k and o are equal, comparing the names' bytes only
// when they are not the same string in memory (a plan's limit names
// usually are: the table keeps the name of the Limit that created it).
func (k tableKey) is(o tableKey) bool {
	return k.alg == o.alg && len(k.name) == len(o.name) &&
		(unsafe.StringData(k.name) == unsafe.StringData(o.name) || k.name == o.name)
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
	key  tableKey
	kind stateKind
	arr  array
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
	// Evictions counts live states dropped to make room for new keys: each
	// one hands its key a fresh quota early.
	Evictions int64
	// Expirations counts states forgotten because they had returned to full
	// quota (by the sweep, or reclaimed by a full shard).
	Expirations int64
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

// Apply implements sluice.Store.
func (s *Store) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	_, err := s.ApplyTimed(ctx, checks, out)
	return err
}

// applyMany decides a call of several checks and returns its time: without
// the shards' mutexes when every state is held and none is a sliding log,
// else under them.
func (s *Store) applyMany(checks []sluice.Check, out []sluice.Status) int64 {
	n := len(checks)
	var (
		hashBuf  [8]hash
		shardBuf [8]uint32
		heldBuf  [8]heldCheck
		stateBuf [8]sluice.State
	)
	var (
		hashes []hash
		idx    []uint32
		held   []heldCheck
		states []sluice.State
	)
	if n <= len(shardBuf) {
		hashes, idx, held, states = hashBuf[:n], shardBuf[:n], heldBuf[:n], stateBuf[:n]
	} else {
		hashes, idx, held, states = make([]hash, n), make([]uint32, n), make([]heldCheck, n), make([]sluice.State, n)
	}
	for i := range checks {
		if i > 0 && checks[i].Key == checks[i-1].Key {
			hashes[i] = hashes[i-1] // a plan's limits of one subject: hash it once
		} else {
			hashes[i] = s.keyHash(checks[i].Key)
		}
		idx[i] = s.shardIndex(hashes[i])
	}
	if now, ok := s.applyManyHeld(checks, out, hashes, idx, held, states); ok {
		return now
	}
	return s.applyManyLocked(checks, out, hashes, idx, states)
}

// heldCheck is where applyManyHeld finds one check's state.
type heldCheck struct {
	ls   *listing
	slot int
	e    *entry
	tag  uint64 // the entry's tag as taken, then as to be released
}

// applyManyHeld decides checks holding their entries only, and reports
// false, having changed nothing, when one of them is not to be decided so
// (see ApplyTimed). held and states are scratch space of len(checks).
func (s *Store) applyManyHeld(checks []sluice.Check, out []sluice.Status, hashes []hash, idx []uint32, held []heldCheck, states []sluice.State) (int64, bool) {
	now, lagged := s.clock.nowFor(checks) // before the entries, as in ApplyTimed
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
	}
	// Take the entries in address order, each once: two calls never wait
	// for each other in a cycle.
	var orderBuf [8]int
	order := orderBuf[:0]
	if len(checks) > len(orderBuf) {
		order = make([]int, 0, len(checks))
	}
	for i := range held {
		order = insertByAddress(order, held, i)
	}
	for k, i := range order {
		if k > 0 && held[order[k-1]].e == held[i].e {
			held[i].tag = held[order[k-1]].tag // the same state twice
			continue
		}
		tag, ok := held[i].e.acquire(hashes[i])
		if !ok {
			releaseHeld(held, order[:k])
			return 0, false
		}
		held[i].tag = tag
	}
	readHeld(held, states)
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

// insertByAddress adds i to order, the indexes of held sorted by their
// entries' addresses (the indexes of one entry in ascending order).
func insertByAddress(order []int, held []heldCheck, i int) []int {
	at := uintptr(unsafe.Pointer(held[i].e))
	k := len(order)
	for k > 0 && uintptr(unsafe.Pointer(held[order[k-1]].e)) > at {
		k--
	}
	order = append(order, 0)
	copy(order[k+1:], order[k:])
	order[k] = i
	return order
}

// releaseHeld releases the entries of order (indexes of held sorted by
// address), each once, with the tag of its last check.
func releaseHeld(held []heldCheck, order []int) {
	for k, i := range order {
		if k+1 == len(order) || held[order[k+1]].e != held[i].e {
			held[i].e.release(held[i].tag)
		}
	}
}

// applyManyLocked decides checks under the mutexes of their shards.
func (s *Store) applyManyLocked(checks []sluice.Check, out []sluice.Status, hashes []hash, idx []uint32, states []sluice.State) int64 {
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
		tables[i] = s.shards[idx[i]].table(&checks[i].Limit)
		slots[i], taken[i], held[i] = tables[i].hold(hashes[i])
	}
	loadHeld(tables, slots, hashes, held, states)
	now, lagged := s.clock.nowFor(checks) // after the wait for the mutexes
	changed := sluice.DecideBatch(checks, states, now, out)
	if lagged && refused(out) {
		now = s.clock.exact()
		loadHeld(tables, slots, hashes, held, states)
		changed = sluice.DecideBatch(checks, states, now, out)
	}
	for i := range checks { // existing keys first: inserts may move entries
		if held[i] && changed {
			tables[i].store(slots[i], hashes[i], &states[i], expiry(now, &out[i]))
		}
	}
	for i := range checks {
		if taken[i] {
			tables[i].arr.es[slots[i]].letGo()
		}
	}
	for i := range checks {
		if changed && !held[i] && !isZero(&states[i]) {
			s.shards[idx[i]].insert(s, tables[i], hashes[i], &states[i], expiry(now, &out[i]), now, hashes)
		}
	}
	for _, k := range locked {
		s.shards[k].mu.Unlock()
	}
	return now
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

// table returns the shard's table for l, creating it.
//
// A plan's few limits meet the same shard again and again: the tables of
// the last few checks are kept at hand, so that most calls find theirs by
// comparing names (the same string, usually: one pointer comparison)
// instead of hashing the name for the map. A table found there stays where
// it is (a plan of up to 4 limits then moves nothing); one from the map
// goes first, pushing out the last.
func (sh *shard) table(l *sluice.Limit) *table {
	name, alg := sluice.LimitKey(l)
	k := tableKey{name, alg}
	for _, t := range &sh.recent {
		if t != nil && t.key.is(k) {
			return t
		}
	}
	t := sh.tables[k]
	if t == nil {
		t = newTable(*l)
		sh.tables[k] = t
		sh.order = append(sh.order, t)
		sh.list()
	}
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
	name, alg := sluice.LimitKey(l)
	k := tableKey{name, alg}
	for j := range min(ls.n, maxListed) {
		if ls := &ls.ls[j]; ls.key.is(k) {
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
		next.ls[next.n] = listing{t.key, t.kind, t.arr}
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

// insert adds h to t, first making room if the shard is full. The states
// of the keys in protect (the call being decided) are never evicted.
func (sh *shard) insert(s *Store, t *table, h hash, st *sluice.State, exp, now int64, protect []hash) {
	if sh.keys >= s.perShard {
		freed := 0
		if sh.soonest <= now && now-sh.swept >= sweepGap {
			freed = sh.sweep(now, false)
			s.expirations.Add(int64(freed))
		}
		if freed == 0 {
			sh.reclaim(s, now, protect)
		}
	}
	if t.insert(h, st, exp) {
		sh.list()
	}
	sh.keys++
	sh.soonest = min(sh.soonest, exp)
}

// reclaim frees one state of a full shard that holds no expired state it
// knows of: the one of a small random sample that expires soonest.
func (sh *shard) reclaim(s *Store, now int64, protect []hash) {
	var (
		victimT   *table
		victimAt  int
		victimExp int64
		buf       [evictionSample]int
	)
	for _, t := range sh.tables { // map order is random: a random table first
		es := t.entries()
		for _, i := range t.sample(buf[:0]) {
			e := &es[i]
			if protected(protect, keyOf(e)) {
				continue
			}
			if exp := expiryOf(e.tag.Load()); victimT == nil || exp < victimExp {
				victimT, victimAt, victimExp = t, i, exp
			}
		}
		if victimT != nil {
			break
		}
	}
	if victimT == nil {
		return // everything sampled is in the current call; exceed briefly
	}
	victim := &victimT.entries()[victimAt]
	victim.hold()
	victimExp = expiryOf(victim.tag.Load()) // a decision may have moved it on
	victimT.remove(victimAt)
	sh.keys--
	if victimExp <= now {
		s.expirations.Add(1)
	} else {
		s.evictions.Add(1)
	}
}

func protected(hashes []hash, h hash) bool {
	for _, p := range hashes {
		if p == h {
			return true
		}
	}
	return false
}
