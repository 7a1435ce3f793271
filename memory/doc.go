// Package memory is sluice's in-process Store: sharded, bounded in the number
// of keys it holds, and free of allocations when it decides for a key it
// already holds.
//
// # Eviction
//
// A store holds at most the states WithMaxKeys allows. A new key arriving
// at a full shard takes the place of a state back at full quota if there
// is one; otherwise one state is evicted, and its key starts afresh the
// next time it comes. Evicting a state never admits more for its key than
// its limit would have: new keys are what an attacker has in unlimited
// supply, and a flood of them must not free a client its limit refuses.
// The rule, among the states the store looks at:
//
//  1. A state at full capacity goes first: a fresh state is the same.
//  2. Then the state with the least share of its capacity used (ties: the
//     one that expires soonest): its key gets back at most what it used.
//  3. A state that refuses a check of cost 1 now never goes while another
//     may. The store looks at 8 states from a random place; while all it
//     found refuse, it looks at every state of a shard of at most 64, else
//     at 8 more from another random place, up to 64 in all. If every one
//     refuses, the new key is not taken: its check is refused (counted in
//     Stats.NoRoom) with a RetryAfter until the first of them stops
//     refusing, and a call of several checks changes nothing. The new key
//     is no more entitled to the room than the refused clients holding it.
//
// A state is judged by the limit that wrote it. Limits of one name and
// algorithm share their states (the plans of a policy, the levels of a
// degradation), so the store keeps, for each name and algorithm, up to 16
// parameter sets it has decided it under: those of every call decided
// under a shard's mutex, which every new key's is. It ranks a state by
// those that may have written it, the ones under which it is back at full
// quota when its entry says it is. When several may have, the strictest
// counts (a window's count of 10 refuses if any of them allows only 10);
// when none may have, the state counts as refusing until it expires. A
// parameter set that the store has met only for keys it already held
// (decided without a mutex) is not among them, and its states are judged
// by the others.
//
// The rule costs a peek at each state looked at (sluice.DecideBatch of
// cost 0): about half a microsecond to a microsecond more per new key at a
// full store (BenchmarkAllowNewKeyFullStore), and a comparison of the
// limit's parameters on each call decided under a shard's mutex. An
// eviction allocates nothing.
package memory
