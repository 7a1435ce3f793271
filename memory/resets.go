package memory

import (
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
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
// limit, a release, for the window (the lease TTL) and a second more; a
// Reset's at least as long as the state it forgot would have lived.
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
	return lifeOf(l.Algorithm(), int64(l.Window()/time.Microsecond))
}

// lifeOf is resetLife for a limit of algorithm alg and a window of w µs.
func lifeOf(alg sluice.Algorithm, w int64) (int64, bool) {
	sec := int64(time.Second / time.Microsecond)
	switch alg {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
		return 2*w + sec, true
	case sluice.AlgorithmSlidingLog, sluice.AlgorithmConcurrency:
		return w + sec, true
	}
	return 0, false
}

// noteReset remembers that h's state of lr, expiring at exp (µs since
// sluice.Epoch; 0 or earlier: none held), was reset at now, for limit l,
// when a refund or a release can reach its algorithm's fresh state (see
// resetLife), and for as long as the state forgotten would have lived if
// that is longer: it may have counted a receipt under a limit of the same
// ID with a longer window than l's, as the Redis store's reset key lives
// as long as the state key would have. The caller holds sh.mu. A reset it
// still remembers of the state at a later time (one that counted the
// newest lease's stamp) keeps that time: whatever was before it is before
// this one.
func (sh *shard) noteReset(h hash, lr *limitRef, l *sluice.Limit, now, exp int64) {
	if life, ok := resetLife(l); ok {
		sh.note(resetID{h, lr.ref}, now, max(life, exp-now), false)
	}
}

// note remembers that the state id was reset (or, if evicted, evicted) at
// at, for life µs (see resetRecord). A note it still holds of the state
// at a later time keeps that time, one that lasts longer keeps lasting,
// and a Reset's note stays one. Past
// maxResetsPerShard, the notes over drop, then evictions' notes: an
// eviction's note, when only Resets' are left, is not kept, so that a
// flood of evictions never makes a receipt or lease from before a Reset
// reach its fresh state. The caller holds sh.mu.
func (sh *shard) note(id resetID, at, life int64, evicted bool) {
	if sh.resets == nil {
		sh.resets = map[resetID]resetRecord{}
	}
	noteIn(sh.resets, id, at, life, evicted)
}

// noteIn is note for the notes m, whatever names their states.
func noteIn[K comparable](m map[K]resetRecord, id K, at, life int64, evicted bool) {
	until := at + life
	if r, ok := m[id]; ok && r.until > at {
		at = max(at, r.at)
		until = max(at+life, r.until)
		evicted = evicted && r.evicted
	} else if !ok && !roomForNote(m, at, evicted) {
		return
	}
	m[id] = resetRecord{at: at, until: until, evicted: evicted}
}

// roomForNote makes room in m for one more note at now (see note): when m
// holds maxResetsPerShard, it drops the notes over, then, while it still
// holds that many, notes of evictions, then, for a Reset's note, any note.
// For an eviction's note it drops notes down to three quarters of the
// bound, so that a flood of evictions scans the notes once per quarter of
// them. It reports whether there is room; the caller holds the mutex of
// m's shard.
func roomForNote[K comparable](m map[K]resetRecord, now int64, evicted bool) bool {
	if len(m) < maxResetsPerShard {
		return true
	}
	keep := maxResetsPerShard - 1
	if evicted {
		keep = maxResetsPerShard * 3 / 4
	}
	for id, r := range m {
		if r.until <= now {
			delete(m, id)
		}
	}
	for id, r := range m {
		if len(m) <= keep {
			break
		}
		if r.evicted {
			delete(m, id)
		}
	}
	for id := range m {
		if evicted || len(m) <= keep {
			break
		}
		delete(m, id)
	}
	return len(m) < maxResetsPerShard
}

// unseenID names the state of a key under a limit the store had not met
// when Reset was asked to forget it: its key's hash and the limit's ID and
// algorithm, which have no number yet (see registry).
type unseenID struct {
	h   hash
	key limitKey
}

// noteUnseen remembers, as noteReset does, that h's state of l, a limit
// the store has not met, was reset at now, so that once the store meets
// l the state h builds under it is dated and seeded as after any Reset
// (see resetAt and seedLeases), as on the Redis store, whose Reset records
// its time beside the key whatever the key held. The notes are kept apart
// from those of limits the store knows, in a bound of their own of
// maxResetsPerShard per shard, and l is not made known: Resets of limits
// the store never decides fill neither the registry (WithMaxLimits) nor
// the notes of the limits it decides. The caller holds sh.mu.
func (sh *shard) noteUnseen(h hash, l *sluice.Limit, now int64) {
	life, ok := resetLife(l)
	if !ok {
		return
	}
	if sh.unseen == nil {
		sh.unseen = map[unseenID]resetRecord{}
	}
	noteIn(sh.unseen, unseenID{h, limitKey{l.ID(), l.Algorithm()}}, now, life, false)
}

// noteEvicted remembers, as Reset does (see noteReset), that h's state of
// lr, st, was evicted at now while it still counted something, when a
// receipt or a lease from before it could reach the state its key builds
// since (see resetLife): from then on a receipt at or before the
// eviction's time is not refunded (see Store.Refund), and a lease stamped
// at or before it frees nothing, so that it never frees a lease of the
// book its key builds since that carries the same stamp (see seedLeases).
// now is no earlier than any receipt the state gave (the clock's
// notBefore, as Reset's time; see noteExpired for a state back at full
// quota); the eviction's time is that or, if later, the newest entry of a
// log (a lease is stamped a µs after the one before, maybe ahead of the
// clock). The note lasts for the longest window among the parameter sets
// of lr that calls have been decided under (see limitRef.window), whether
// the store keeps them or not and whether a call met them under a shard's
// mutex or holding only its keys' entries, and is bounded apart from
// Resets' (see note): past the bound, a receipt from before an older
// eviction may be refunded into its key's fresh state. The caller holds
// sh.mu.
func (sh *shard) noteEvicted(h hash, lr *limitRef, st *sluice.State, now int64) {
	if lr == nil || st.A == 0 && st.B == 0 && len(st.Log) == 0 {
		return
	}
	// The longest window: the note outlives every receipt and lease.
	life, ok := lifeOf(lr.key.alg, lr.window.Load())
	if !ok {
		return
	}
	at := now
	if n := len(st.Log); n > 0 {
		at = max(at, st.Log[n-1].At)
	}
	sh.note(resetID{h, lr.ref}, at, life, true)
}

// noteExpired is noteEvicted for h's state of lr, st, expiring at exp (µs
// since sluice.Epoch), that the shard forgets or a decision at now reads
// as a fresh one (see Store.liveAfter) while it still counted something:
// swept, evicted or overwritten once back at full quota under the limit
// that last wrote it, it may still count a receipt given under a limit of
// the same ID with a longer window (another plan, a degradation level, a
// reload), which the state its key builds since never counted, as the
// Redis store leaves a state born after a receipt alone. The state gave
// its receipts and leases before min(exp, now) (a charge leaves a state
// expiring after it, and a later write, at a later time, no earlier than
// that time): the note is at the µs before, so that a receipt of the
// state built since, given at now or later, is refunded (while a clock
// stepped back is below it, one given since is not, as after a Reset).
// Only the states of the algorithms that take refunds are noted (see
// expiryNoted): a lease book back at full quota has every lease it held
// expired, and the leases taken since are stamped after them. The caller
// holds sh.mu.
func (sh *shard) noteExpired(h hash, lr *limitRef, st *sluice.State, exp, now int64) {
	if expiryNoted(lr) {
		sh.noteEvicted(h, lr, st, min(exp, now)-1)
	}
}

// expiryNoted reports whether the expiry of a state of lr that still
// counted something is noted (see noteExpired): whether lr's algorithm
// takes refunds.
func expiryNoted(lr *limitRef) bool {
	return lr != nil && algo.Refundable(algo.Kind(lr.key.alg))
}

// resetAt returns when h's state of lr was last reset (or evicted), and
// true, if the shard still remembers it at now: a note of lr's, or of a
// Reset from before the store met lr (see noteUnseen), the later of them.
// It returns false when it remembers none: any time, before sluice.Epoch
// too, is after every reset it remembers. The caller holds sh.mu.
func (sh *shard) resetAt(h hash, lr *limitRef, now int64) (int64, bool) {
	at, ok := recentNote(sh.resets, resetID{h, lr.ref}, now)
	if len(sh.unseen) > 0 {
		if u, found := recentNote(sh.unseen, unseenID{h, lr.key}, now); found && (!ok || u > at) {
			at, ok = u, true
		}
	}
	return at, ok
}

// recentNote returns the time of m's note of id, and true, if it lasts
// past now; a note that does not is dropped. The caller holds the mutex of
// m's shard.
func recentNote[K comparable](m map[K]resetRecord, id K, now int64) (int64, bool) {
	r, ok := m[id]
	if !ok {
		return 0, false
	}
	if r.until <= now {
		delete(m, id)
		return 0, false
	}
	return r.at, true
}

// newestLease returns the stamp of the newest lease in h's lease book of
// lr at p, which the shard holds, and false when it holds none; the caller
// holds sh.mu. Stamps rise through a book (see algo.SlidingLog): its last
// entry is its newest, which may be a few µs ahead of the time read, one
// per lease taken at one instant.
func (sh *shard) newestLease(h hash, lr *limitRef, p place) (int64, bool) {
	if p.slot != sideSlot {
		return 0, false
	}
	i := sh.sideIndex(h, lr.ref)
	if i < 0 {
		return 0, false
	}
	log := sh.side[h][i].state().Log
	if len(log) == 0 {
		return 0, false
	}
	return log[len(log)-1].At, true
}

// seedLeases makes st, the fresh lease book of h's concurrency limit lr,
// begin with an entry of no units at the time of the key's last reset the
// shard remembers, if any (of lr's, or from before the store met lr: see
// noteUnseen): the book stamps its first lease at least a µs after it (a
// lease is stamped after the newest entry), so that no lease taken since
// the reset has the stamp of one from before it, which Release ignores
// (see Store.Release). The entry counts no units, and expires as a lease
// would; unseedLeases takes it out after the decision. The caller holds
// sh.mu.
func (sh *shard) seedLeases(h hash, lr *limitRef, st *sluice.State) {
	if lr.key.alg != sluice.AlgorithmConcurrency || len(sh.resets) == 0 && len(sh.unseen) == 0 {
		return
	}
	r, ok := sh.resets[resetID{h, lr.ref}]
	if u, found := sh.unseen[unseenID{h, lr.key}]; found && (!ok || u.at > r.at) {
		r, ok = u, true
	}
	if ok {
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
