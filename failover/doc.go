// Package failover makes a remote sluice.Store (Redis) safe to depend on. A
// Store wraps a primary store and a local one: every call to the primary is
// bounded by a timeout, a circuit breaker keeps calls away from a primary
// that keeps failing, and the calls the primary cannot decide are decided by
// a OnError:
//
//   - Local ("local", the default): on the local store (typically a
//     memory.Store), each limit divided by the number of instances that
//     share the primary, each key starting from its share of what the
//     primary last said it had left (as read under the limit in force,
//     should a reload have changed it under the same ID: what the old
//     limit had used is used of the new one); what it admits is charged to
//     the primary (Options.ChargeOnce) before the primary decides the key
//     again.
//     Together the instances then admit at most the shared limit plus, in
//     the window of a switch, what one instance could not know; a limit
//     below the number of instances gives each a share of 1 all the same,
//     so the fleet admits that number rather than refuse everything. The
//     bounds per algorithm are in package redis's documentation (Failover).
//   - Allow ("allow"): every check admitted; availability over protection.
//   - Deny ("deny"): every check refused until the breaker may ask the
//     primary again; protection over availability.
//
// Under Local, each charge goes to the primary under an id of its own
// (Options.ChargeOnce). A charge call that fails may have been taken all
// the same — a timeout after the primary ran it, a reply lost on the way
// back — so its charges are in doubt: the next call sends each again,
// under the same id and with no more units, until a call succeeds, and the
// primary takes each id once. The guarantee is exactly once per charge id
// within ChargeHorizon of its limit, which is how long redis.Store.ChargeOnce
// keeps an id (plus a minute) from the charge that took it. A charge still
// in doubt past its horizon is dropped unsent: its units no longer limit
// anyone. A primary that loses an id sooner (an eviction, a replica
// promoted without it) takes its retry again, and the key then refuses up
// to that many units more until they pass; so does every retry of a
// Charge, which has no ids.
//
// Use it around any store that can fail or be slow (a network between the
// limiter and its state). A memory.Store needs none of it.
//
// The contract: an error is never a decision. Apply either fills out with a
// decision — the primary's, or its OnError rule's, and then counted in Stats and
// reported to Options.OnFallback, so a caller can always tell them apart —
// or returns an error, and then out means nothing. A caller that gives up
// gets an error wrapping its context's error, never a fallback decision, and
// its call is not counted against the primary; an invalid check or limit is
// the caller's error (sluice.ErrInvalidCheck, sluice.ErrInvalidLimit); a
// local fallback that fails too is an error wrapping
// sluice.ErrStoreUnavailable. Recovery needs nobody: once the breaker has
// been open for BreakerOptions.OpenFor, one probe call goes to the primary,
// and its success makes every later call the primary's again. The probe is
// the next call; a Store whose calls may stop during an outage (an idle
// instance, a server shedding every request) runs Store.RunProbes beside
// it, which probes without a call, so that its breaker, and the health
// read from it (Stats), follow the primary's.
//
// A Store is safe for concurrent use when its stores are. The zero Options
// mean Local, one instance, DefaultTimeout (50 ms) per call and
// the default breaker (DefaultBreakerFailures consecutive failures open it
// for DefaultBreakerOpenFor). A Store must be made with New; the zero Store
// has no stores, and its calls return an error wrapping
// sluice.ErrStoreUnavailable.
//
// Put an overlimit.Cache between the Store and the remote store, so that the
// cache remembers only the remote store's answers and the breaker hears only
// of the calls that reached it (see CachingStore):
//
//	cache := overlimit.New(redisStore, overlimit.Options{})
//	store, err := failover.New(cache, memory.New(), failover.Options{Instances: 4})
package failover
