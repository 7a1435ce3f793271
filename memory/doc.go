// Package memory is sluice's in-process Store: sharded, bounded in the
// memory its states hold (see WithMaxKeys), and free of allocations when it
// decides for a key it already holds.
//
// # Keys and states
//
// A store keeps one state per (key, limit ID, algorithm), as a sluice.Store
// must, and keeps all the states of one key together: a shard holds one
// entry per key, in an open-addressing array, with the key's states in
// slots of the entry (up to four; a sliding counter's state takes two).
// The checks of one call on one key — a plan's per-second, per-minute and
// per-day limits — so find their states with one lookup and take them with
// one lock. A shard's entries are as wide as its widest key needs; states
// that do not fit (sliding logs and concurrency leases, whose size varies,
// and a key's states beyond six slots) are kept beside the array and
// decided under the shard's mutex.
//
// A state expires when the limit that wrote it has it back at full quota
// (in whole seconds, rounded up), and Store.Sweep forgets it then; until
// it does, every call, refund, release and Reset reads it as absent, as a
// Redis key past its TTL is. Such a state that still counted something
// is noted as an evicted one is when the store forgets it or a call reads
// it as absent: a receipt given before it expired, under a limit of the
// same ID with a longer window, is not refunded into the state its key
// builds since (see Store.Refund). A call refused (by the state's own
// check, or by another enforcing check of the call) writes no state, yet
// moves the expiry of each state it read to when the limit that checked it
// has it back at full quota, if that is later: a limit reloaded with a
// longer window counts a state beyond the expiry its last write gave it,
// as the Redis store's keys do. A release or a refund never moves a
// state's expiry earlier: it may come under the limit a reload replaced
// (a request decided before the reload ends after it), whose shorter
// window would have Sweep forget a state the limit in force still counts.
//
// The bound of WithMaxKeys counts states, not keys: a limit's promise is
// made per state, a call adds states one by one, and a key's states are
// what an attacker multiplies. Memory follows the entries: a state costs
// the share of its entry it uses, and every entry of a shard is as wide
// as the shard's widest key needs, at most about 40 bytes and 60 a slot
// (its array is kept two fifths to half full). So a state costs about 90
// bytes for keys of one limit each and 65 for keys of three, but keys of
// one state each beside a key of more cost that key's width each: about
// 260 bytes beside a plan of four slots, and at most about 400 (beside a
// key that fills six). A side state costs more, and a sliding log (or a
// concurrency limit's lease book) holds 16 bytes per entry of room in its
// array, which the store chooses (see WithMaxKeys): such a state counts
// toward the bound as one state per 8 entries of room beside its own,
// about 210 bytes and 16 per entry, so the bound is one on bytes, about
// 400 a unit at most, whatever the algorithms and keys. A log that must
// grow past its room at a full shard makes room as a new key does (see
// Eviction), and is refused when only refusing states could make it; a log
// that shrinks gives its units back.
//
// The store knows at most WithMaxLimits limits (ID and algorithm), 16,384
// by default, and forgets none while it lives: a call that checks one more
// is an error wrapping sluice.ErrStoreUnavailable (counted in
// Stats.LimitsRefused), so that limits named after requests cannot grow
// the store without a bound.
//
// # Eviction
//
// A store holds at most what WithMaxKeys allows. A new key arriving at a
// full shard, or a log growing past its room there, takes the place of a
// state back at full quota if there is one; otherwise one state is
// evicted, and its key starts afresh the next time it comes. Evicting a
// state never frees a client its limit refuses, nor a request in flight:
// new keys are what an attacker has in unlimited supply, and a flood of
// them must not free a client its limit refuses, nor let a key hold more
// leases than its limit at once. A key its limit does not refuse may be
// admitted more than the limit allows: its evicted state gives it back
// what it had used, and once it has spent that again its new state may be
// evicted again, by the next new state. What bounds it: each eviction is
// paid for by one new state (or one log's growth) at a shard none of whose
// states it looks at is back at full quota, and takes the least used of
// them; each eviction of a key's state admits it at most what it had used
// beyond its limit, less than the limit's burst (at most the burst for a
// leaky bucket whose queue admits with a delay). A receipt from before the
// eviction is not refunded into the key's fresh state, while the shard
// remembers the eviction (see Store.Refund; past that bound, such refunds
// give it at most as much again). Stats.Evictions counts them; a store
// with room for the states of every key active within the longest window
// evicts none.
//
// The rule, among the states the store looks at (never those the call
// being decided checks; its keys' other states count as any other):
//
//  1. A state at full capacity goes first: a fresh state is the same.
//  2. Then the state with the least share of its capacity used (ties: the
//     one that expires soonest): its key gets back at most what it used.
//  3. A state that refuses a check of cost 1 now never goes while another
//     may, nor a lease book holding a lease that has not expired (its
//     leases are requests in flight; it counts as refusing until the last
//     of them expires). The store looks at the states of 8 keys from a
//     random place; while all it found refuse, it looks at every key of a
//     shard of at most 64, else at 8 more keys from another random place,
//     up to 64 in all. A key's other states stay; a key left with none goes.
//     A limit decided only in shadow mode (every check of its ID and
//     algorithm a shadow one) for its longest window and two seconds
//     refuses no one: its states rank by rule 2, as wholly used, never as
//     refusing, until a check of it in enforcing mode is decided, and
//     again a window after its last one (a limit rolled back to shadow
//     mode). A client whose state is evicted so starts afresh if its limit
//     enforces again, as one of a limit only ever in shadow mode does.
//     If every one
//     refuses, the new key is not taken: its check is refused (counted in
//     Stats.NoRoom) with a RetryAfter until the first of them stops
//     refusing, and a call of several checks changes nothing. So is a log
//     that must grow past its room, with its call. The new key
//     is no more entitled to the room than the refused clients holding it.
//     A shadow check never refuses a call: its new state (or its log's
//     growth), which finds no room, is not kept, and the check reports
//     what an enforcing one would have, refused for want of room (counted
//     in Stats.NoRoom), nothing counted or charged.
//
// A state is judged by the limit that wrote it. Limits of one name and
// algorithm share their states (the plans of a policy, the keys with a
// quota of their own, the levels of a degradation), so the store keeps,
// for each name and algorithm, the first 64 parameter sets it decides it
// under, and at most 65,536 beyond each limit's first in all: those of
// every call decided under a shard's mutex, which every new key's is. It
// forgets none of them. It ranks a state by those that may have written
// it, the ones under which it is back at full quota when its slot says it
// is. When several may have, the strictest counts (a window's count of 10
// refuses if any of them allows only 10); when none may have, the state
// counts as refusing until it expires. A parameter set met beyond those
// bounds is not kept, but may have written states that the kept ones take
// for their own. A window algorithm's set may have written the states that
// are back at full quota when its window (length, calendar period and
// offset) says, whatever its quantity, and no other: for each of the first
// 4 windows a name meets beyond the bounds, the store notes the least
// quantity met under it, and a state that window may have written counts
// as that quantity would count it — refusing until it expires once it
// holds that many units, else used by its share of them — while a state of
// another window does not. The sets of windows met past those 4 are noted
// by their least quantity alone: every state of the name that another set
// counts as used counts by that quantity too, whatever its window, so one
// strict set past those 4 can hold a full store's room for the rest of its
// window; size WithMaxKeys for that, or keep a name's sets within the
// bounds. A bucket's debt is a time every rate reads alike, so a bucket's
// set met beyond the bounds may have written any state of its name: every
// state counted as used counts by the shortest whole refill of those sets
// too.
// A parameter set that the store has met only for keys it already held
// (decided without a mutex) is not among them, and its states are judged
// by the others.
// Shadow mode (rule 3) is judged per name and algorithm, not per
// parameter set: while checks under any of a name's parameter sets
// enforce, every state of that name that refuses ranks as refusing, a
// shadow plan's among them. The window it waits is the longest of the
// name's parameter sets kept, of the windows noted beyond them, of the
// debts (whole burst and queue) a bucket's set noted beyond them may write
// and of its enforcing checks noted; a state that none of the sets kept or windows
// noted can have written ranks as refusing if the name was ever decided in
// enforcing mode.
//
// The rule costs, per new state at a full store, a peek at each state
// looked at (sluice.DecideBatch of cost 0) under each parameter set kept
// for its limit and each window noted beyond them
// (BenchmarkAllowNewKeyFullStore), and on each call decided under a
// shard's mutex a lookup of the limit's parameters among those kept, which
// takes no lock and allocates nothing once they are kept or noted beyond
// the bounds (a set beyond them of a window not yet noted, while fewer
// than 4 are, or of less quantity than its window's, takes the registry's
// mutex and allocates once); on every call, a load per enforcing check of
// when its limit was last decided in enforcing mode (a store at most about
// once a second per limit). An eviction allocates nothing.
package memory
