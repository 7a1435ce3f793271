// Package overlimit remembers denials in front of a remote sluice.Store, so
// that a client that keeps knocking after it was refused is refused again
// in-process, without a round trip. A Cache wraps the store it remembers the
// answers of; it is what keeps Redis calm under a flood from one abusive
// client.
//
// Use it directly around a remote store (Redis), inside a failover.Store so
// that it remembers only the remote store's answers, never a fallback's.
// A store in the same process (memory.Store) gains nothing from it.
//
// The contract: the cache never refuses what the store would admit. It
// refuses a call itself only when the store refused the same key and limit
// at a cost no larger than the call's, with a wait that has not passed yet;
// everything else goes to the store. A refusal it repeats states what the
// store would state at that moment, as far as what the store said allows:
// the units left and the wait for the call's cost (exact for a fixed window
// and the buckets, lower bounds for a sliding window), and the figures of
// the checks that fitted beside the refusal, a shadow limit's refusal
// included. A check it knows nothing of, or whose remembered units do not
// cover its cost, is reported sluice.Status.Undecided: not refusing, with
// no figures. Concurrency limits, whose units come back when work ends on
// any instance rather than with time, are never remembered. An error is
// never a decision: the cache returns the store's errors as they are,
// remembers nothing from a call that failed (an error that may mean the
// store restarted makes it forget every denial), and with no store behind
// it fails every call with sluice.ErrStoreUnavailable.
// Capacity that comes back other than with time must be reported:
// Invalidate after a refund, Reset after a configuration change. Capacity
// that comes back through another instance sharing the store reaches no
// call of this cache but a peek: a denial is remembered for at most
// Options.MaxAge, so such a refusal ends here at most that late, or at the
// first answer of the store that states room for its cost.
//
// A Cache is safe for concurrent use when its store is. Its memory is
// bounded by Options.MaxEntries; the zero Options mean DefaultMaxEntries
// (65,536 denials), DefaultMaxAge (1 s) and time.Now. A Cache must be made
// with New; the zero Cache has no store behind it, and its calls return an
// error wrapping sluice.ErrStoreUnavailable.
package overlimit
