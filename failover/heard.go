package failover

import "github.com/sluice-dev/sluice"

// Heard records out, the primary's statuses for checks, from a call that
// reached the primary around the Store (redis.Leased takes quota from
// Redis directly), as the Store records the answers of its own calls: a
// later fallback on their keys starts from this instance's share of what
// the primary said was left (see Store). Without it, a key decided only
// around the Store would fall back to a whole share, beyond what the
// primary had left. out must be the primary's answer, not a fallback's;
// its statuses' Remaining and ResetAfter are read, as of now. Heard is safe
// for concurrent use; with a policy other than Local, and on the zero
// Store, it does nothing.
func (f *Store) Heard(checks []sluice.Check, out []sluice.Status) {
	if f.memo == nil || len(out) < len(checks) {
		return
	}
	f.memo.put(checks, out, f.now())
}
