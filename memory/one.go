package memory

import (
	"context"
	"encoding/binary"
	"unsafe"

	"github.com/sluice-dev/sluice"
)

// ApplyTimed implements sluice.TimedStore: it is Apply, also returning the
// time of the decision in µs since sluice.Epoch, by the store's clock (the
// one of WithClock, else the wall time at New plus the monotonic time
// since). It never fails, and ctx is not consulted (see Store).
//
// A call of one check has a common case — a key the store holds, in the
// shard's first listed table, of a bucket algorithm, at the ticker's time
// (or the exact one of a clock without a ticker), its entry free, admitted
// at once by Limit.AdmitGCRA or AdmitLevel — that runs here with no call
// (for a key of 8 to 16 bytes; a call to hash any other): the Go compiler
// keeps no register across a call, so a call in the middle of a path
// spills and reloads all that is live across it. Anything else leaves by a call that decides the rest of the way
// (applyListed, or decideHeld once the entry is held), having changed
// nothing. BENCHMARKS.md has what this path costs.
func (s *Store) ApplyTimed(_ context.Context, checks []sluice.Check, out []sluice.Status) (int64, error) {
	if len(checks) != 1 {
		return s.applyMany(checks, out), nil
	}
	c, st := &checks[0], &out[0]
	var h hash
	if n := uint64(len(c.Key)); n-8 <= 8 {
		// keyHasher.of for a key of 8 to 16 bytes (most IPv4 addresses and
		// user ids), inline: a call here would spill what the path keeps
		// in registers. TestOneKeyOneState holds it to of.
		k := &s.hasher
		b := unsafe.Slice(unsafe.StringData(c.Key), n) // read only
		x, y := k.seeds[0]^n, k.seeds[1]^n
		a, z := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
		x, y = fold(a^k.seeds[4], z^x), fold(a^k.seeds[5], z^y)
		h = hash{fold(x, k.seeds[6]) | 1, fold(y, k.seeds[7])&idMask | tagMark}
	} else {
		h = s.keyHash(c.Key)
	}
	i := s.shardIndex(h)
	ls := s.dir[i].Load()
	if ls == nil || ls.n == 0 {
		return s.applyOneLocked(c, st, h, i), nil
	}
	l := &ls.ls[0]
	if name, alg := sluice.LimitKey(&c.Limit); !l.key.is(tableKey{name, alg}) {
		return s.applyListed(c, st, h, i, s.lookup(i, &c.Limit)), nil
	}
	// The time is read before the entry is looked up: its latency then
	// overlaps the entry's cache miss (a clock read after it waited for the
	// miss and added to it: about 10 ns per decision at -cpu 2). Two
	// decisions on one key may so decide in the other order of their times,
	// by the few nanoseconds one waits for the other's entry; the algorithms
	// take a time behind the state's as no time passed.
	if l.kind > kindTB {
		return s.applyListed(c, st, h, i, l), nil
	}
	var now int64
	lagged := s.clock.res != 0
	if v := s.clock.cached.Load(); lagged && v&1 != 0 && s.clock.tolerates(&c.Limit) {
		now = v >> 1
	} else if !lagged {
		now = s.clock.exact() // WithClock, or a resolution of 0
	} else {
		return s.applyListed(c, st, h, i, l), nil
	}
	// find and acquire's first attempt, inline.
	es := l.arr.es
	n := len(es)
	if n == 0 {
		return s.applyListed(c, st, h, i, l), nil
	}
	slot := home(h, n)
	for probes := 0; ; probes++ {
		h1 := es[slot].h1.Load()
		if h1 == h.h1 {
			break
		}
		if h1 == 0 || probes == n {
			return s.applyListed(c, st, h, i, l), nil
		}
		if slot++; slot == n {
			slot = 0
		}
	}
	e := &es[slot]
	tag := e.tag.Load()
	if tag&(keyMask|lockBits) != h.h2 || !e.tag.CompareAndSwap(tag, tag|lockDecide) {
		return s.applyListed(c, st, h, i, l), nil // held, or not h's
	}
	if e.h1.Load() != h.h1 { // replaced since: see entry.acquire
		e.release(tag)
		return s.applyListed(c, st, h, i, l), nil
	}
	// Limit.AdmitGCRA and AdmitLevel inline here; the kind of the table
	// (T and B, else T and A) says which of the two can answer.
	var reset int64
	var ok bool
	if l.kind == kindTB {
		reset, ok = c.Limit.AdmitGCRA(&e.t, &e.a, now, c.Cost)
	} else {
		reset, ok = c.Limit.AdmitLevel(&e.t, &e.a, now, c.Cost)
	}
	if ok {
		e.release(h.tag(expiryAfter(now, reset)))
		c.Limit.Admitted(st, reset)
		return now, nil
	}
	return s.decideHeld(c, st, h, l, slot, tag, now, lagged), nil
}

// applyListed decides a call of one check, of key hash h in shard i, whose
// table is listed as l (nil: not among the listed ones), holding its entry
// only when it can (see applyHeld), else under the shard's mutex.
func (s *Store) applyListed(c *sluice.Check, st *sluice.Status, h hash, i uint32, l *listing) int64 {
	if now, ok := s.applyHeld(c, st, h, l); ok {
		return now
	}
	return s.applyOneLocked(c, st, h, i)
}

// applyHeld decides a call of one check, of key hash h, whose table is
// listed as l, holding its entry only: a key the store holds, in a table
// its shard lists, whose entry is free for the taking. It reports false,
// having changed nothing, otherwise (a new key, a sliding log, a table not
// listed, an entry the shard's owner holds): the caller then decides under
// the shard's mutex.
func (s *Store) applyHeld(c *sluice.Check, st *sluice.Status, h hash, l *listing) (int64, bool) {
	if l == nil || l.kind == kindLog {
		return 0, false
	}
	now, lagged := s.clock.nowForOne(&c.Limit) // before the entry, as in ApplyTimed
	slot, ok := find(l.arr.es, h)
	if !ok {
		return 0, false
	}
	e := &l.arr.es[slot]
	tag, ok := e.acquire(h)
	if !ok {
		return 0, false
	}
	return s.decideHeld(c, st, h, l, slot, tag, now, lagged), true
}

// decideHeld decides a call of one check whose entry, slot of ls, the
// caller holds (taken with tag) at now, and lets the entry go.
func (s *Store) decideHeld(c *sluice.Check, st *sluice.Status, h hash, ls *listing, slot int, tag uint64, now int64, lagged bool) int64 {
	e := &ls.arr.es[slot]
	// A bucket admitting at once, without DecideBatch's generality;
	// AdmitOne declines the rest, having written nothing.
	if ls.kind != kindTAB {
		if reset, ok := c.Limit.AdmitOne(&e.t, &e.a, now, c.Cost, st); ok {
			e.release(h.tag(expiryAfter(now, reset)))
			return now
		}
	}
	one, out := unsafe.Slice(c, 1), unsafe.Slice(st, 1)
	var states [1]sluice.State
	ls.arr.read(ls.kind, slot, &states[0])
	changed := sluice.DecideBatch(one, states[:], now, out)
	if lagged && refused(out) {
		now = s.clock.exact()
		ls.arr.read(ls.kind, slot, &states[0])
		changed = sluice.DecideBatch(one, states[:], now, out)
	}
	if changed {
		ls.arr.write(ls.kind, slot, &states[0])
		tag = h.tag(expiry(now, st))
	}
	e.release(tag)
	return now
}

// applyOneLocked decides a call of one check, of h in shard i, under the
// shard's mutex.
func (s *Store) applyOneLocked(c *sluice.Check, st *sluice.Status, h hash, i uint32) int64 {
	one, out := unsafe.Slice(c, 1), unsafe.Slice(st, 1)
	sh := &s.shards[i]
	sh.mu.Lock()
	t := sh.table(&c.Limit, &s.judges)
	var states [1]sluice.State
	slot, _, ok := t.hold(h)
	if ok {
		t.load(slot, h, &states[0])
	}
	now, lagged := s.clock.nowFor(one) // after the wait for the mutex
	changed := sluice.DecideBatch(one, states[:], now, out)
	if lagged && refused(out) {
		now = s.clock.exact()
		states[0] = sluice.State{}
		if ok {
			t.load(slot, h, &states[0])
		}
		changed = sluice.DecideBatch(one, states[:], now, out)
	}
	if changed {
		exp := expiry(now, st)
		if ok {
			t.store(slot, h, &states[0], exp)
		} else {
			at := s.upkeepTime(sh, now, lagged)
			if until, in := sh.insert(s, t, h, &states[0], exp, at, nil, false); !in && !c.Limit.Shadow() {
				// A shadow check never refuses: its state goes unkept.
				refuseNoRoom(st, at, until)
				s.noRoom.Add(1)
				now = at
			}
		}
	}
	if ok {
		t.arr.es[slot].letGo()
	}
	sh.mu.Unlock()
	return now
}
