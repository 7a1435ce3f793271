package failover

import (
	"context"
	"time"

	"github.com/sluice-dev/sluice"
)

// Heard records out, the primary's statuses for checks, from a call that
// reached the primary around the Store (redis.Leased takes quota from
// Redis directly), as the Store records the answers of its own calls: a
// later fallback on their keys starts from this instance's share of what
// the primary said was left (see Store). Without it, a key decided only
// around the Store would fall back to a whole share, beyond what the
// primary had left.
//
// A fallback that has already admitted units on a key (a call around the
// Store, sent before the primary failed, answered after) is lowered to that
// share less what it has admitted and not yet charged to the primary: what
// the call took is not admitted again locally. A key whose local
// admissions are being charged now is left as it is, and one that has
// admitted nothing locally starts from that share at its next local
// decision.
//
// out must be the primary's answer, not a fallback's; its statuses'
// Remaining and ResetAfter are read, as of now. at, when not nil, holds
// the primary's time of each check's decision, in µs since sluice.Epoch
// by the clock of the server that decided (0: unknown), as its scripts
// return it: what the Store remembers of a key says more is left only
// after a later decision, so that the late answer of an earlier decision
// does not replace a later one. An answer is known to be later than the
// one remembered where both decision times are known and its is the
// greater, or where its call was sent once that one had arrived. Any
// other is of unknown order (no decision time on either side, both calls
// in flight at once, or a decision time earlier than the remembered one's:
// another server, promoted by a failover, may decide by a clock that is
// behind) and replaces the one remembered only if it leaves no more, the
// two read under the answer's limit (a reload that changed the limit
// under the same ID: what the remembered one had used is used of the new
// parameters). A status that measures nothing of the key's use (NoRoom,
// Unavailable, Undecided) is neither remembered nor lowers the fallback,
// and leaves what was remembered of the key as it was. Heard is safe for
// concurrent use; with a policy other than Local, and on the zero Store,
// it does nothing.
func (f *Store) Heard(checks []sluice.Check, out []sluice.Status, at []int64) {
	if f.memo == nil || len(out) < len(checks) || at != nil && len(at) < len(checks) {
		return
	}
	now := f.now()
	f.memo.put(checks, out, at, time.Time{}, now)
	var take []sluice.Check
	var target []int64
	var of []int // of[j]: the index in checks of take[j]
	for i := range checks {
		c := &checks[i]
		if !chargeable(c.Limit) || out[i].ResetAfter <= 0 || !measures(&out[i]) {
			continue
		}
		owed, ok := f.ledger.owedOn(c)
		if !ok {
			continue
		}
		remaining := out[i].Remaining
		if w, ok := f.memo.start(c, now); ok { // lowered here, with what it owes: not again by seed
			remaining = min(remaining, w.remaining) // a later decision's, kept
		}
		share := c.Limit
		if f.instances > 1 {
			share = f.share(share)
		}
		take = append(take, sluice.Check{Key: c.Key, Limit: share})
		of = append(of, i)
		target = append(target, max(min(remaining/f.instances, share.Burst())-owed, 0))
	}
	if len(take) > 0 {
		// The local store is in memory: its calls do not wait on ctx, and
		// an error leaves the fallback as it was, deciding as before. A
		// state it could not lower (no room) is lowered by seed.
		unwritten, _, _ := f.lowerTo(context.Background(), take, target)
		for _, j := range unwritten {
			f.memo.unstart(&checks[of[j]])
		}
	}
}
