package failover

import (
	"time"

	"github.com/sluice-dev/sluice"
)

// FellBack reports whether the Store decided a call by its OnError rule
// instead of the primary — the primary failed it, a breaker kept it from
// the primary, or this instance's share refused it while returning — in
// the last within of its elapsed time (see BreakerOptions.Clock), on a
// node of checks (see Options.Node), or on any node when checks is empty.
//
// A caller that judges the figures of a decision it got from Apply asks it
// with how long ago Apply began: a true answer says that the decision may
// be the OnError rule's, whose Remaining is of no state of the primary's:
// this instance's share of the limit under Local, none under Allow and
// Deny (whose statuses are Unavailable besides). Calls of other keys on
// the same nodes count as well, so it errs on the side of true. It changes
// nothing. The zero Store never fell back.
func (f *Store) FellBack(checks []sluice.Check, within time.Duration) bool {
	if f.primary == nil {
		return false
	}
	since := f.elapsed() - int64(within)
	if len(checks) == 0 {
		return fellBackSince(f.lastFallback.Load(), since)
	}
	for name := range f.nodeNames(checks) {
		if n := f.nodes.lookup(name); n != nil && fellBackSince(n.lastFallback.Load(), since) {
			return true
		}
	}
	return false
}

// fellBackSince reports whether at, a fallback's stamp (its elapsed time
// plus one; 0: none), is at or after since.
func fellBackSince(at, since int64) bool { return at != 0 && at-1 >= since }
