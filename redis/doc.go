// Package redis is sluice's shared Store: many instances of a service keep
// their limits in one Redis (standalone, Sentinel or Cluster), through
// github.com/redis/rueidis, and decide exactly as package memory and
// sluice.Limit.Decide do.
//
// # Opening a store
//
// Open is the one call a service needs: from Options (addresses and mode,
// credentials and database, the per-call Timeout, 50 ms by default, and the
// on_store_error policy with the number of instances sharing Redis) it
// builds the store `sluice serve` runs — the Redis Store behind an
// over-limit cache (package overlimit) inside a failover (package
// failover) that decides on a local memory store (package memory), or
// admits, or refuses, whatever Redis cannot decide. It needs no Redis to
// start: until one answers at the addresses, and whenever it cannot, the
// failover decides, and the store connects in the background.
//
//	store, err := redis.Open(ctx, redis.Options{Addrs: []string{"redis:6379"}, Instances: 4})
//	if err != nil {
//		return err // options that can never work
//	}
//	defer store.Close()
//	limiter := sluice.NewLimiter(store)
//
// New (around a rueidis client of the caller's) and Dial return the bare
// Store, whose calls fail with sluice.ErrStoreUnavailable when Redis does.
//
// # Keys
//
// The state of a limit for a subject (Check.Key) is one key,
//
//	sluice:{<subject>}:<limit-name>
//
// holding a string for fixed window, sliding window counter, token bucket,
// leaky bucket and GCRA — the algorithm's number, "|", then the state's
// three integers as little-endian IEEE 754 doubles, which Redis's Lua packs
// and unpacks far faster than decimal text (the decimal "<algorithm> <t>
// <a> <b>" of earlier versions is still read; an earlier version reads the
// packed form as a key never seen) — or a hash for the sliding log and
// concurrency leases, whose entries are its fields. A script run reads the
// strings of all its keys with one MGET and writes each key it changed once,
// at its end, with one SET and the key's TTL.
//
// The braces are a Cluster hash tag: every limit of one subject lives in
// the same slot, so a check of its per-second, per-minute and per-day
// limits is one atomic script run, one round trip. The key records the
// algorithm with the state; a state written under another algorithm (or of
// another type) counts as a key never seen. (A subject that itself contains "}" still keeps its
// limits together, except one that starts with "}", which empties the tag;
// such subjects are decided correctly, only through the cross-slot protocol
// below.)
//
// Every write sets the key's TTL in the same script, to the decision's
// reset-after rounded up to a millisecond (at least 1 ms): the time after
// which the state is worth a fresh one. No key is ever left without a TTL;
// peeks and refused checks write nothing.
//
// # Time
//
// The scripts read the time from Redis (TIME), converted to integer
// microseconds since sluice.Epoch, never from the client: instances with
// skewed clocks still share one clock. Tests can pass their own time with
// WithTimeForTesting.
//
// # Scripts
//
// The Lua sources are embedded from lua/*.lua: one file per algorithm
// family (fixed_window.lua; sliding_log.lua, also for concurrency leases;
// sliding_counter.lua; bucket.lua for token bucket, leaky bucket and GCRA),
// shared helpers (arith.lua, state.lua) and three entry points concatenated
// with them at load time: apply.lua, which decides every check of a call
// that lives in one slot all-or-nothing exactly as sluice.DecideBatch (or
// of several calls, see Batching);
// refund.lua, which undoes a reservation; and release.lua, which gives
// concurrency leases back. A call's apply script carries only the families
// its checks use, since Lua defines every function of a script on each
// run. Scripts run with EVALSHA, falling back to EVAL when Redis does not
// know them yet (NOSCRIPT).
//
// The scripts reproduce Limit.Decide exactly, decision by decision. Lua's
// numbers are doubles, exact for integers up to 2^53; sluice bounds its
// limits so that every time, count and tick stays below that, and the few
// quantities that do not — the sliding window counter's ⌊prev·(w−e)/w⌋ with
// products up to 2^86 — are computed by exact shift-and-add division
// (arith.lua). Numbers are written to Redis packed, or as text with "%d"
// (exact below 2^63), never with Lua's default "%.14g", which rounds.
//
// # Batching
//
// Under load, most of Redis's time for a lone call goes to running a command
// and a script at all, not to the decision: inside Redis a lone GCRA call
// takes about 18 µs, a call in a run of 20 about 5 µs (2026-11-30, Redis
// 7.0, INFO commandstats). On a standalone server or with Sentinel the store
// therefore batches (group commit): while DefaultBatchRuns scripts are in
// flight, further calls wait, and as soon as one run returns, everything
// waiting is sent as one script run that decides the calls one after another
// at one instant, each atomically and all-or-nothing, each with its own
// statuses or its own error (a call that fails while deciding, say on a
// corrupt state, writes nothing and does not fail the others; if Redis
// refuses the run's writes, out of memory, every call of the run fails and
// nothing is written). A call that finds fewer runs in flight is sent at
// once, so a lightly loaded store adds no wait; a call whose context ends
// while it waits consumes nothing, and one still waiting when the store's
// timeout has passed fails without being sent. WithBatching tunes or
// disables it. On a Cluster a script can only touch one slot, so calls are
// not batched there.
//
// # Checks that span slots
//
// On a Cluster, the checks of one call whose keys hash to different slots
// (a global limit next to a per-user one) cannot be one script. The store
// groups them by slot and runs one script per slot in ascending slot order,
// each all-or-nothing, reserving what it admits. If a later slot refuses,
// the earlier reservations are refunded (refund.lua) and the later slots are
// decided without writing, so the call reports what sluice.DecideBatch
// would: the violated limits refused, every other check as a peek. The
// refund restores a key exactly when nothing else wrote it since the
// reservation, and otherwise takes the reservation's units back out of
// whatever it holds (bucket ticks, the window's count, the log entry).
//
// This is not one atomic step: between a reservation and its refund, other
// calls see the reserved units as used (they may be refused although the
// call that reserved them will not be admitted), and the slots are decided
// at slightly different Redis times. It never admits more than a limit
// allows. If Redis fails in the middle, the store returns an error after a
// best-effort refund; a refund that fails too leaves the reservation in
// place, which errs on the side of refusing. Redis never sees a multi-slot
// script, so CROSSSLOT errors cannot happen.
//
// # Errors
//
// An error is never a decision. Every failure to decide — connection
// refused or lost, timeout, a Redis error reply such as LOADING or OOM —
// wraps sluice.ErrStoreUnavailable, so that callers apply their failure
// policy; only a context cancelled by the caller does not.
package redis
