package memory

import (
	"time"

	"github.com/sluice-dev/sluice"
)

// maxResetsPerShard bounds the resets a shard remembers (see resetRecord):
// past it, those over drop first, then any one.
const maxResetsPerShard = 256

// resetID names one state a shard may hold: its key's hash and its
// limit's number (limitRef.ref).
type resetID struct {
	h   hash
	ref uint32
}

// resetRecord is when Reset forgot a state that a receipt or a lease
// from before it could still reach (µs since sluice.Epoch: no earlier than
// any receipt it forgot, see Reset), and until when one could still change
// the state that came after: for a fixed window or sliding counter, a
// refund, for two windows and a second more; for a concurrency limit, a
// release, for the lease TTL and a second more.
type resetRecord struct {
	at, until int64
}

// resetLife returns how long a reset of l's state must be remembered (see
// resetRecord), and false for algorithms whose fresh state nothing from
// before the reset can reach: a sliding log's receipt names its entry's
// instant, which a fresh log holds only if it was charged at that µs, and
// the buckets take no refunds.
func resetLife(l *sluice.Limit) (int64, bool) {
	w, sec := int64(l.Window()/time.Microsecond), int64(time.Second/time.Microsecond)
	switch l.Algorithm() {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
		return 2*w + sec, true
	case sluice.AlgorithmConcurrency:
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
	life, ok := resetLife(l)
	if !ok {
		return
	}
	if sh.resets == nil {
		sh.resets = map[resetID]resetRecord{}
	}
	at := now
	if r, ok := sh.resets[resetID{h, lr.ref}]; ok && r.until > now {
		at = max(at, r.at)
	}
	if len(sh.resets) >= maxResetsPerShard {
		for id, r := range sh.resets {
			if r.until <= now {
				delete(sh.resets, id)
			}
		}
		for id := range sh.resets {
			if len(sh.resets) < maxResetsPerShard {
				break
			}
			delete(sh.resets, id)
		}
	}
	sh.resets[resetID{h, lr.ref}] = resetRecord{at: at, until: at + life}
}

// noteEvicted remembers, as Reset does (see noteReset), that h's lease
// book of lr, book, was evicted at now holding a lease that may still be
// given back: from then on a lease stamped at or before its newest one
// frees nothing, so that it never frees a lease of the book its key builds
// since that carries the same stamp (see seedLeases). The rule evicts a
// book only once it is back at full quota (see judge), with every lease
// expired: the leases taken since are stamped after them, and that
// eviction needs no note. The caller holds sh.mu.
func (sh *shard) noteEvicted(h hash, lr *limitRef, book *sluice.State, now int64) {
	n := len(book.Log)
	if lr == nil || lr.key.alg != sluice.AlgorithmConcurrency || n == 0 {
		return
	}
	ls := lr.list()
	longest := &ls[0].Limit // the longest lease TTL: the note outlives every lease
	for j := range ls {
		if ls[j].Limit.Window() > longest.Window() {
			longest = &ls[j].Limit
		}
	}
	sh.noteReset(h, lr, longest, max(now, book.Log[n-1].At))
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
