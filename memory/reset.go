package memory

import "github.com/sluice-dev/sluice"

// Reset forgets key's state under each of limits (one state per limit ID
// and algorithm), as if the key had never been seen: its next check finds
// the limit's full quota. It reports how many states it forgot; a state
// the store does not hold (never seen, swept, evicted), or holds past its
// expiry (which a decision reads as a fresh one, see Sweep), is not
// counted, as the Redis store does not count a key past its TTL.
// Reset is safe for concurrent use with Apply: a decision that holds the
// key's entry finishes first, and one that comes after finds it gone.
//
// A receipt (Status.Charged) given before the reset is not refunded into
// the state the key builds since, which never counted it (see Refund), as
// on the Redis store, and a lease (Status.Lease) taken before it is not
// given back out of the lease book the key builds since (see Release),
// which would free a request in flight since. The reset is noted at a time
// no earlier than any receipt or lease it forgets: the exact time, or
// later when an injected clock (WithClock) has stepped back since it read
// a later one, or when the newest lease forgotten was stamped ahead of
// the clock (a µs per lease taken at one instant). Receipts at or before
// that time are not refunded, and leases stamped at or before it not
// given back: the first lease taken since is stamped at least a µs after
// it. While a stepped-back clock is behind that time, receipts given
// since are not refunded either: a step back never creates capacity. A
// shard remembers its last 256 resets of fixed windows and sliding
// counters (for two windows and a second), of sliding logs (for the window
// and a second: a receipt names its entry's instant, which a log charged
// since in the reset's microsecond holds too) and of concurrency limits
// (for their lease TTL and a second), by the limit reset, or, when
// longer, for as long as the state it forgets would have lived (a limit of
// the same ID with a longer window may have counted the receipt) or as the
// note of an earlier reset of the state lasts, as the Redis store's reset
// key lives: past that bound, a receipt from
// before an older reset may be refunded into its fresh state, and a lease
// from before it given back out of its fresh book.
//
// A limit the store has never decided is reset too, as on the Redis store,
// which records the reset beside the key whatever it held: the state the
// key builds once the store meets the limit is dated and seeded after the
// reset like any other (a receipt given in the reset's µs is not refunded,
// and the first lease is stamped a µs after it). Such a limit is not made
// known to the store (it counts nothing against WithMaxLimits), and its
// resets are remembered apart, the last 256 of each shard: Resets of
// limits the store never decides push out only each other's. A limit that
// cannot be decided (Limit.Err), or a new one when the store knows as many
// limits as WithMaxLimits lets it (it will decide none), is not noted.
func (s *Store) Reset(key string, limits []sluice.Limit) int {
	if s.zero() {
		return 0
	}
	h := s.keyHash(key)
	sh := &s.shards[s.shardIndex(h)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	forgot := 0
	for i := range limits {
		lr := s.limits.find(&limits[i])
		if lr == nil {
			s.resetUnseen(sh, h, &limits[i])
			continue
		}
		p, _, held := sh.locate(h, lr)
		// The reset's time is read holding the key's entry (locate waits
		// for a decision that holds it) and the shard's mutex, no earlier
		// than any time the store has decided at (see clock.notBefore):
		// every receipt of a charge the reset forgets is at or before it,
		// and so, once the newest lease's stamp is counted, every lease.
		at := s.clock.notBefore()
		var exp int64 // the expiry of the state forgotten
		if held {
			exp = sh.expiryAt(p, h, lr)
		}
		live := held && exp > s.liveAfter(at) // else none, or read as fresh, as a decision would
		if live && lr.key.alg == sluice.AlgorithmConcurrency {
			if newest, ok := sh.newestLease(h, lr, p); ok {
				at = max(at, newest)
			}
		}
		sh.noteReset(h, lr, &limits[i], at, exp)
		if held {
			sh.forgetAt(h, lr, p)
		}
		if live {
			forgot++
		}
	}
	return forgot
}

// resetUnseen notes the Reset of h's state of l, a limit the store has not
// met, on sh, whose mutex the caller holds (see shard.noteUnseen): the
// store holds no state of l to forget, and a receipt or a lease given
// since in the reset's µs is, as on the Redis store, from before it. A
// limit that cannot be decided, or that the store may no longer meet
// (it knows as many limits as WithMaxLimits lets it), is not noted: no
// state of it will be.
func (s *Store) resetUnseen(sh *shard, h hash, l *sluice.Limit) {
	if l.Err() != nil || s.limits.count() >= s.limits.max {
		return
	}
	sh.noteUnseen(h, l, s.clock.notBefore())
}

// forget forgets h's state of lr, and h when it has no other, and reports
// whether the shard held it; the caller holds sh.mu.
func (sh *shard) forget(h hash, lr *limitRef) bool {
	p, _, ok := sh.locate(h, lr)
	if ok {
		sh.forgetAt(h, lr, p)
	}
	return ok
}

// forgetAt forgets h's state of lr at p, which locate found and holds,
// and h when it has no other; the caller holds sh.mu.
func (sh *shard) forgetAt(h hash, lr *limitRef, p place) {
	a := sh.arr
	if p.slot == sideSlot {
		sh.dropSide(h, sh.sideIndex(h, lr.ref))
	} else {
		a.clear(lr.kind, p.slot)
	}
	sh.keys--
	if sh.states(p.base, h) == 0 {
		a.remove(p.base)
		return
	}
	a.setSecs(p.base, sh.entrySecs(p.base, h))
	a.letGo(p.base)
}
