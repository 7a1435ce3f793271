package memory

import (
	"time"

	"github.com/sluice-dev/sluice"
)

// maxResetsPerShard bounds the resets and evictions a shard remembers
// (see resetRecord): past it, those over drop first, then notes of
// evictions, and a Reset's note only for another Reset's.
const maxResetsPerShard = 256

// resetID names one state a shard may hold: its key's hash and its
// limit's number (limitRef.ref).
type resetID struct {
	h   hash
	ref uint32
}

// resetRecord is when Reset forgot a state, or an eviction freed one
// (evicted), that a receipt or a lease from before it could still reach
// (µs since sluice.Epoch: no earlier than any receipt it forgot, see
// Reset), and until when one could still change the state that came
// after: for a fixed window or sliding counter, a refund, for two windows
// and a second more; for a sliding log, a refund, and for a concurrency
// limit, a release, for the window (the lease TTL) and a second more.
type resetRecord struct {
	at, until int64
	evicted   bool
}

// resetLife returns how long a reset of l's state, or an eviction of it
// (see noteEvicted), must be remembered (see resetRecord), and false for
// the buckets, which take no refunds: nothing from before the reset
// reaches their fresh state. A sliding log's receipt names its entry's
// instant, and the log its key builds since holds entries of its own at
// that instant when it is charged in the reset's µs (a clock that stands
// still, or a coarse one): the note keeps the receipt out of them while
// they count.
func resetLife(l *sluice.Limit) (int64, bool) {
	w, sec := int64(l.Window()/time.Microsecond), int64(time.Second/time.Microsecond)
	switch l.Algorithm() {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
		return 2*w + sec, true
	case sluice.AlgorithmSlidingLog, sluice.AlgorithmConcurrency:
		return w + sec, true
	}
	return 0, false
}

// noteReset remembers that h's state of lr was reset at now, for limit
// l, when a refund or a release can reach its algorithm's fresh state (see
// resetLife); the caller holds sh.mu. A reset it still remembers of the
// state at a later time (one that counted the newest lease's stamp) keeps
// that time: whatever was before it is before this one.
func (sh *shard) noteReset(h hash, lr *limitRef, l *sluice.Limit, now int64) {
	if life, ok := resetLife(l); ok {
		sh.note(resetID{h, lr.ref}, now, life, false)
	}
}

// note remembers that the state id was reset (or, if evicted, evicted) at
// at, for life µs (see resetRecord). A note it still holds of the state
// at a later time keeps that time, and a Reset's note stays one. Past
// maxResetsPerShard, the notes over drop, then evictions' notes: an
// eviction's note, when only Resets' are left, is not kept, so that a
// flood of evictions never makes a receipt or lease from before a Reset
// reach its fresh state. The caller holds sh.mu.
func (sh *shard) note(id resetID, at, life int64, evicted bool) {
	if sh.resets == nil {
		sh.resets = map[resetID]resetRecord{}
	}
	if r, ok := sh.resets[id]; ok && r.until > at {
		at = max(at, r.at)
		evicted = evicted && r.evicted
	} else if !ok && !sh.roomForNote(at, evicted) {
		return
	}
	sh.resets[id] = resetRecord{at: at, until: at + life, evicted: evicted}
}

// roomForNote makes room for one more note at now (see note): when the
// shard holds maxResetsPerShard, it drops the notes over, then, while it
// still holds that many, notes of evictions, then, for a Reset's note, any
// note. For an eviction's note it drops notes down to three quarters of the
// bound, so that a flood of evictions scans the notes once per quarter of
// them. It reports whether there is room; the caller holds sh.mu.
func (sh *shard) roomForNote(now int64, evicted bool) bool {
	if len(sh.resets) < maxResetsPerShard {
		return true
	}
	keep := maxResetsPerShard - 1
	if evicted {
		keep = maxResetsPerShard * 3 / 4
	}
	for id, r := range sh.resets {
		if r.until <= now {
			delete(sh.resets, id)
		}
	}
	for id, r := range sh.resets {
		if len(sh.resets) <= keep {
			break
		}
		if r.evicted {
			delete(sh.resets, id)
		}
	}
	for id := range sh.resets {
		if evicted || len(sh.resets) <= keep {
			break
		}
		delete(sh.resets, id)
	}
	return len(sh.resets) < maxResetsPerShard
}

// noteEvicted remembers, as Reset does (see noteReset), that h's state of
// lr, st, was evicted at now while it still counted something, when a
// receipt or a lease from before it could reach the state its key builds
// since (see resetLife): from then on a receipt at or before the
// eviction's time is not refunded (see Store.Refund), and a lease stamped
// at or before it frees nothing, so that it never frees a lease of the
// book its key builds since that carries the same stamp (see seedLeases).
// now is no earlier than any receipt the state gave (the clock's
// notBefore, as Reset's time); the eviction's time is that or, if later,
// the newest entry of a log (a lease is stamped a µs after the one before,
// maybe ahead of the clock). The note lasts for the longest window among
// lr's limits, and is bounded apart from Resets' (see note): past the
// bound, a receipt from before an older eviction may be refunded into its
// key's fresh state. The rule evicts a lease book only once it is back at
// full quota (see judge), with every lease expired: the leases taken since
// are stamped after them, and that eviction needs no note. The caller
// holds sh.mu.
func (sh *shard) noteEvicted(h hash, lr *limitRef, st *sluice.State, now int64) {
	if lr == nil || st.A == 0 && st.B == 0 && len(st.Log) == 0 {
		return
	}
	ls := lr.list()
	longest := &ls[0].Limit // the longest window: the note outlives every receipt and lease
	for j := range ls {
		if ls[j].Limit.Window() > longest.Window() {
			longest = &ls[j].Limit
		}
	}
	life, ok := resetLife(longest)
	if !ok {
		return
	}
	at := now
	if n := len(st.Log); n > 0 {
		at = max(at, st.Log[n-1].At)
	}
	sh.note(resetID{h, lr.ref}, at, life, true)
}

// resetAt returns when h's state of lr was last reset, if the shard still
// remembers it at now, else 0; the caller holds sh.mu.
func (sh *shard) resetAt(h hash, lr *limitRef, now int64) int64 {
	r, ok := sh.resets[resetID{h, lr.ref}]
	if !ok {
		return 0
	}
	if r.until <= now {
		delete(sh.resets, resetID{h, lr.ref})
		return 0
	}
	return r.at
}

// newestLease returns the stamp of the newest lease in h's lease book of
// lr at p, which the shard holds (0: none); the caller holds sh.mu.
// Stamps rise through a book (see algo.SlidingLog): its last entry is its
// newest, which may be a few µs ahead of the time read, one per lease
// taken at one instant.
func (sh *shard) newestLease(h hash, lr *limitRef, p place) int64 {
	if p.slot != sideSlot {
		return 0
	}
	i := sh.sideIndex(h, lr.ref)
	if i < 0 {
		return 0
	}
	log := sh.side[h][i].state().Log
	if len(log) == 0 {
		return 0
	}
	return log[len(log)-1].At
}

// seedLeases makes st, the fresh lease book of h's concurrency limit lr,
// begin with an entry of no units at the time of the key's last reset the
// shard remembers, if any: the book stamps its first lease at least a µs
// after it (a lease is stamped after the newest entry), so that no lease
// taken since the reset has the stamp of one from before it, which Release
// ignores (see Store.Release). The entry counts no units, and expires as
// a lease would; unseedLeases takes it out after the decision. The caller
// holds sh.mu.
func (sh *shard) seedLeases(h hash, lr *limitRef, st *sluice.State) {
	if lr.key.alg != sluice.AlgorithmConcurrency || len(sh.resets) == 0 {
		return
	}
	if r, ok := sh.resets[resetID{h, lr.ref}]; ok {
		st.Log = []sluice.LogEntry{{At: r.at}}
	}
}

// unseedLeases takes out of st, a lease book decided from seedLeases'
// state, the entry of no units it began with, if the decision kept it:
// a state with no lease is the fresh state.
func unseedLeases(st *sluice.State) {
	if len(st.Log) == 0 || st.Log[0].Units != 0 {
		return
	}
	if st.Log = st.Log[1:]; len(st.Log) == 0 {
		*st = sluice.State{}
	}
}
