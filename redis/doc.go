// Package redis is sluice's shared Store: many instances of a service keep
// their limits in one Redis (standalone, Sentinel or Cluster), through
// github.com/redis/rueidis, and decide exactly as package memory and
// sluice.Limit.Decide do while Redis answers (see Failover for what holds
// when it does not). It needs Redis 7.0 or later: the scripts of calls
// that span Cluster slots read a key's expiry with PEXPIRETIME, which older
// servers refuse (their calls fail, and the failover decides them).
//
// # Opening a store
//
// Open is the one call a service needs: from Options (addresses and mode,
// credentials and database, the per-call Timeout, 50 ms by default, and the
// on_store_error rule with the number of instances sharing Redis) it
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
// leaky bucket and GCRA — the algorithm's number and ":", "@", the time
// the state was created (its first write since the key held none) and
// "|", each number a little-endian IEEE 754 double, then the state's three
// integers as three more, which Redis's Lua packs and unpacks far faster
// than decimal text (the forms of earlier versions, without the time, or
// the decimal "<algorithm> <t> <a> <b>", are still read; versions before
// the packed form read it as a key never seen) — or a hash for the sliding
// log and concurrency leases, whose entries are its fields. A refund, a
// lease given back or a cross-slot reservation refunded that was counted
// before a state's creation time was counted by a state the key no longer
// holds (evicted, deleted): it leaves the state alone (see Store.Refund,
// Checks that span slots and Leased quota). A script run reads the
// strings of all its keys with one MGET and writes each key it changed once,
// at its end, with one SET and the key's TTL.
//
// A subject is written so between the braces when it is not empty and
// holds no "{" or "}". Any other subject is written percent-encoded ("%" as
// %25, "{" as %7B, "}" as %7D, every other byte as it is; the empty subject
// as a lone "%"), after a "%":
//
//	sluice:%{<encoded subject>}:<limit-name>
//
// so "" is sluice:%{%}:<limit-name> and "}a{b" is
// sluice:%{%7Da%7Bb}:<limit-name>. No two subjects share a key (see Key).
// Earlier versions wrote every subject as it is, so a subject that is empty
// or holds a brace starts afresh on upgrade, and while old and new
// instances share one Redis in a rolling upgrade each side keeps its own
// state of such a subject, which may be admitted up to twice its limit
// meanwhile; every other subject keeps its key.
//
// The braces are a Cluster hash tag, never empty: every key of one subject
// (its limits' states, their reset keys and charge ids) lives in the same
// slot, so a check of its per-second, per-minute and per-day limits is one
// atomic script run, one round trip. The key records the algorithm with
// the state; a state written under another algorithm (or of another type)
// counts as a key never seen. So unlike the memory store, which keeps a
// state per (key, ID, algorithm), the Redis store keeps one per (key, ID):
// limits of two algorithms met in turn under one ID on one key start each
// other afresh (see sluice.Limit.WithID).
//
// Every write sets the key's TTL in the same script, to the decision's
// reset-after rounded up to a millisecond (at least 1 ms): the time after
// which the state is worth a fresh one. No key is ever left without a TTL;
// peeks write nothing, and a refused call writes no state: it only
// lengthens, at the end of its script run (PEXPIRE … GT), the TTL of each
// of its keys that the limit now checking it counts for longer — to its
// reset-after under that limit, rounded down to a millisecond — as after a
// reload that lengthened the limit's window (a key no call met between the
// reload and its old TTL is forgotten then). Store.Reset leaves beside a
// state it deletes the time of the reset, at the state's key with
// "sluice:reset:" in place of its "sluice:" (sluice:reset:{<subject>}:
// <limit-name>), for as long as a lease taken before it could be given
// back (see Leased quota), and tells the other instances of a leasable
// limit's reset on the stream sluice:resets (two notices per Reset, one
// before it and one after: the subject, the limits' IDs and, after, the
// reset's time; at most about 10,000 kept, the stream
// living as long as the longest reset key it announced).
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
// shared helpers (arith.lua, state.lua) and four entry points concatenated
// with them at load time: apply.lua, which decides every check of a call
// that lives in one slot all-or-nothing exactly as sluice.DecideBatch (or
// of several calls, see Batching);
// refund.lua, which undoes a reservation; release.lua, which gives
// concurrency leases back; and charge.lua, which charges units admitted
// without Redis (see Failover). A call's apply script carries only the families
// its checks use, since Lua defines every function of a script on each
// run. Scripts run with EVALSHA, falling back to EVAL when Redis does not
// know them yet (NOSCRIPT). While a Cluster slot moves between masters (a
// reshard), Redis answers TRYAGAIN, without running it, to a script whose
// keys are not all on the node asked (a key not written yet next to one
// that exists); the store sends it again, after a wait of 1 ms doubling up
// to 16 ms, until the move ends or the call's time is up, when the call
// fails with that TRYAGAIN. No other error is sent again: a script whose
// reply was lost may have run.
//
// The scripts reproduce Limit.Decide exactly, decision by decision. Lua's
// numbers are doubles, exact for integers up to 2^53; sluice bounds its
// limits so that every time, count, tick and wait stays below that, and the few
// quantities that do not — the sliding window counter's ⌊prev·(w−e)/w⌋ with
// products up to 2^86 — are computed by exact shift-and-add division
// (arith.lua). Numbers are written to Redis packed, or as text with "%d"
// (exact below 2^63), never with Lua's default "%.14g", which rounds.
//
// # Batching
//
// Under load, most of Redis's time for a lone call goes to running a command
// and a script at all, not to the decision (INFO commandstats shows it: a
// call decided in a run of many costs Redis a fraction of one sent alone).
// On a standalone server or with Sentinel the store
// therefore batches (group commit): while DefaultBatchRuns scripts are in
// flight, further calls wait, and as soon as one run returns, everything
// waiting is sent as one script run that decides the calls one after another
// at one instant, each atomically and all-or-nothing, each with its own
// statuses or its own error (a call that fails while deciding, say on a
// corrupt state, writes nothing and does not fail the others; if Redis
// refuses the run's writes, out of memory, every call of the run fails and
// nothing is written). A call that finds fewer runs in flight is sent at
// once, so a lightly loaded store adds no wait; a call whose context ends
// while it waits consumes nothing, and one still waiting when less than a
// quarter of the store's timeout is left fails without being sent. A
// caller's context bounds its own call only: a call alone in its run is
// bounded by it as if it were not batched, while a run of several calls
// ends by the earliest of their store timeouts (each counted from when its
// call began), never by one caller's shorter deadline, which would fail
// the other calls as errors of the store; a call whose context ends while
// such a run is in flight returns when the run ends. So no call returns
// past its own timeout for having waited for its batch. WithBatching tunes
// or disables it. On a Cluster a script can only touch one slot, so calls
// are not batched there.
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
// whatever it holds (the window's count, the log entry, or what a bucket
// misses because of the reservation), so that every state is as if the
// call never ran — unless the key was reset at or after the reservation
// (its reset key, see Keys) or holds a state created after it (the state
// that counted it evicted or deleted): that state never counted the
// reservation, and the refund leaves it alone rather than hand its units
// out again. A key the refund restores gets back the TTL it had, which the
// refund and a slot decided without writing lengthen as any refused call
// does (see Keys). A bucket records what each of its last four
// reservations makes it miss (those of admitted calls among them: a
// reservation is not known to be final when made), as other calls write
// it under the same rate and other reservations are refunded, in any
// order; a write under another rate (a reload, a degradation level)
// forgets them. The refund of one no longer recorded gives back what the
// bucket misses because of it at the least: its units less the bucket's
// refill since the reservation, exact when no time passed between them,
// and otherwise a little less than the reservation still holds (errs on
// the side of refusing). The refill is counted up to the bucket's last
// write, which after the store's clock stepped back may be dated before
// a write that had already refilled the reservation away: such a refund
// then gives back up to the bucket's refill over the step, and never more
// than the reservation's units, beyond the limit (docs/decisions.md).
//
// This is not one atomic step: between a reservation and its refund, other
// calls see the reserved units as used (they may be refused although the
// call that reserved them will not be admitted), and the slots are decided
// at slightly different Redis times. It never admits more than a limit
// allows, but for a refund after a clock step back (above). Refunds run
// on a context of their own, bounded by the store's timeout: a caller
// whose context ends meanwhile does not strand them. If Redis fails in
// the middle, the store returns an error after a
// best-effort refund; a refund that fails too leaves the reservation in
// place, which errs on the side of refusing, and is counted
// (Store.Unrefunded). A refusal a slot decided stays a refusal whatever
// settling it meets: a refund that fails is counted so, its checks
// reporting what their reservation took, and a later slot that cannot be
// read reports its checks as not refusing, with nothing remaining; the
// call is never turned into an error that OnStoreError would decide.
// Redis never sees a multi-slot script, so CROSSSLOT errors cannot happen.
//
// # Failover
//
// Open's store keeps the promise of every limit across a failure of
// Redis, within the bounds below, and says what it could not keep:
//
//   - A circuit breaker per node (failover.Options.Node with Store.Node):
//     on a Cluster, per master, so that the keys of healthy masters stay on
//     Redis while another master is down: what a call spanning the down
//     master admitted locally on a healthy one is charged there at once,
//     within the call's Timeout (a master that fails that charge returns as
//     the down one does, below; when the call spent its Timeout waiting
//     for the down master, the keys of the limits it admitted there return
//     through this instance's share and Redis together); standalone and with Sentinel, per
//     master address. failover.Stats.Nodes counts per node. A Cluster must
//     run with cluster-require-full-coverage no for this to hold: with
//     Redis's default, every master refuses every command (CLUSTERDOWN)
//     while one is failing, and every key is decided by OnStoreError.
//   - The local fallback remembers: each Redis answer's remaining count (a
//     lease's take included: failover.Store.Heard) is kept per key
//     (failover.Options.Remember bounds them, 65,536 by default). An
//     answer that leaves no more replaces the remainder kept (the two
//     read under the answer's limit, should a reload have changed it);
//     one that leaves more only if it is known to be of a later decision:
//     a take's by the time its script returns, later than the one kept;
//     a call's by being sent once the one kept had arrived. Those times
//     are each server's own clock, which may go backwards across a
//     failover: a take timed earlier is of unknown order, as are two
//     calls in flight at once. A stale higher remainder is never kept
//     over a lower one unless the lower is known to be older, whatever
//     the order the replies arrived in; a status that tells nothing of
//     the key's use (NoRoom, Unavailable, Undecided) leaves it as it is.
//     An instance that falls back starts each key from its share of that,
//     ⌊remaining/Instances⌋, instead of a whole share. A limit a reload
//     changed under the same name (the same state in Redis) is started
//     from that answer as read under the new limit: what the old one had
//     used is used of the new one (10 of 10 an hour used, raised to 12:
//     2 left), exactly for a fixed window, at most what Redis holds for
//     the others.
//   - What the fallback admitted is charged to Redis (Store.ChargeOnce, one
//     charge.lua run per check, under an id that Redis takes once: a
//     charge whose reply is lost and that is sent again is not taken
//     twice) before Redis decides the key again, the charge and the
//     decision within one Timeout, a decision the charge left too little
//     of it decided by OnStoreError; an instance that
//     decided locally, once Redis answers it again, decides for four more
//     breaker periods by its share and by Redis together (a call is admitted
//     only if both admit it), so that every instance has charged what it
//     admitted before any decides on Redis alone, and none admits beyond its
//     share meanwhile. An instance none of whose calls reached a master while
//     it was down — its leases covered them, or it had none — returns too: a
//     read of the watch (below) that the master does not answer marks it as a
//     failure of the instance's own would (failover.Store.Unreachable), and so
//     does a master the watch did not see as one at its previous read (a
//     replica promoted, a master Sentinel named). An outage between two reads
//     (100 ms apart) may go unseen by such an instance: what the others'
//     fallbacks admitted meanwhile, at most their shares, may then go beyond
//     the promise.
//   - With Sentinel, the store moves to a new primary on the Sentinels'
//     +switch-master event, and asks them every SentinelRefresh (5 s)
//     besides: a store that missed the event (its Sentinel connection was
//     down at that moment) does not stay on the old primary. A demoted
//     primary refuses its writes (an error, decided by OnStoreError); one
//     cut off from the Sentinels but not from the store keeps accepting
//     them for at most that long, a split the Options.Replicas wait turns
//     into errors.
//   - Open's store reads every master's replication history every 100 ms
//     (INFO replication, every node at once; a node that does not answer
//     within the larger of 100 ms and the store's timeout is read again at
//     the next round). A master that takes over without everything its
//     predecessor acknowledged up to the store's last read of it — a
//     replica promoted while the old master still accepted writes (a
//     graceful Sentinel failover), or before it received them (a crash) —
//     is counted in Guarded.Losses and logged at error level, and so is a
//     master back at its address without its data. The store learns an
//     offset only by reading it: what the old master acknowledged after
//     its last read (the last 100 ms before a crash, more if its last reads
//     went unanswered) is compared with nothing, and a crash that loses
//     only those writes is neither counted nor logged (the bound below).
//     The keys a master evicts to make room (INFO stats evicted_keys) are
//     counted and logged too: an evicted state gives its client a fresh
//     quota, and a master with a maxmemory and a maxmemory-policy other
//     than noeviction is warned about when first seen.
//     With Options.Replicas (WithReplicas), every script run waits for its
//     replicas (WAIT) and a write none of them holds is an error, decided
//     by OnStoreError and charged later, never a decision a failover can
//     forget; it costs about two fifths of the decisions per second of a
//     store on one client (RELIABILITY.md has the figures).
//
// The bounds, for a limit of Q per window W (a bucket: burst B) shared by n
// instances under OnStoreError local, each instance's share
// s = max(⌊Q/n⌋, 1) (a bucket's: max(⌊B/n⌋, 1)). From fresh states the n
// shares together admit n·s per window (a bucket: a burst of n·s): at most
// Q, but n when Q < n, whose shares are rounded up to 1 so that no limit
// refuses everything while Redis is out (sluice check warns of such a
// limit):
//
//   - Fixed window, sliding log, sliding counter: in the window in which
//     Redis fails, at most Q plus Σ over instances of (Rᵢ − R)/n, where R is
//     what Redis had left at the failure and Rᵢ what it last told instance
//     i: the others' admissions that instance had not heard of, at most
//     (n−1) shares (one share for two instances), a few units when every
//     instance is busy on the key, and, when Q < n, up to n − Q more from
//     the shares rounded up to 1. In each window wholly within the outage,
//     at most n·s. In the window in which it returns, at most Q when every
//     instance's probe succeeds within the return period of the first
//     (the usual case: instances probe every OpenFor), else Q
//     plus what a late instance admits locally after the others returned,
//     at most its share. The sliding algorithms' windows are any (t−W, t];
//     a sliding counter is charged in its current window.
//   - Token bucket, leaky bucket, GCRA: the same, in units of B on top of
//     the bucket's own promise (at most B + d·Q/W in any span d); each share
//     refills at Q/(n·W).
//   - Concurrency: not charged — a lease taken locally is given back to the
//     local store, and one charged to Redis could not be given back before
//     it expired. While Redis is out and for one lease time after it
//     returns, at most Q + n·s units are in flight: Q held on Redis, and
//     each instance's share s taken locally (Concurrency(1) on 4
//     instances: 5).
//   - A call whose reply is lost (Redis ran it, and the caller's timeout
//     passed first, or the connection dropped) is decided again by the
//     failover, and what that decision admits is charged to Redis on top
//     of what the lost run counted: its units are counted twice, once —
//     too many, never too few. Each such call makes the key refuse up to
//     its cost more than the limit would, until its window passes (a
//     bucket: until it refills). Apply runs carry no charge id: making
//     every decision idempotent would cost a write per call, for a rare
//     fault that errs on the side of refusing. (A charge, which carries an
//     id, is taken once.)
//   - A Sentinel or Cluster failover that loses acknowledged writes (above)
//     admits their units again; without Replicas, the bound is what the old
//     master counted (admitted, or leased) between the last write the new
//     master holds and the switch. The loss is counted and logged, and the
//     leases end, when the store had read the old master past that write;
//     a crash that loses only what the old master acknowledged after the
//     store's last read of it (its last 100 ms, usually) goes unseen: not
//     counted, not logged, the leases taken in that span spent or given
//     back as usual — within the same bound (5 units admitted unreplicated
//     before a crash, a limit of 10: 15 admitted in the window).
//     Options.Replicas (WithReplicas, standalone and Sentinel) closes the
//     gap: a write no replica holds is an error, never a decision.
//   - A master back at its address without its data (restarted without
//     persistence) has forgotten all it counted: in the window in which it
//     comes back, the fleet admits again what it had counted in that
//     window, on top of the bounds above — up to Q more than the promise (a
//     bucket: B); what the fallback admitted during the outage is charged
//     to it as after any outage. The loss is logged and counted
//     (Losses.EmptyRestarts); Replicas does not prevent it. A restart that
//     kept the data is counted too when Redis gives the master a new
//     replication ID (a restart from its AOF, or from an RDB file written
//     while it had no replica): the replication history, all the store
//     reads, cannot tell it from a loss, and errs on counting one — the
//     leases end, unspent, and receipts from before it are not refunded —
//     never on hiding one. Two instances, 60 of a limit of 100 counted when
//     Redis was killed and restarted empty within the window: 160 admitted
//     in it. A master restarted from an RDB snapshot written while it had a
//     replica continues the history the snapshot carries, from the
//     snapshot's offset: it has forgotten the writes after the snapshot,
//     and is counted and logged as a failover that lost them
//     (Losses.LostWrites, LostBytes: how far past the snapshot the store
//     had read the master), with a failover's bound and its blind span —
//     a snapshot holding all the store read of it is counted as nothing.
//
// RELIABILITY.md records what was measured per mode and fault: the worst
// second with two instances at four times their share, by kind of failure.
//
// The 50 ms default Timeout is shorter than a failover: a Sentinel master
// killed was replaced in 1.7–1.9 s (down-after-milliseconds 500 ms), a
// Cluster master in 2.0–2.7 s (cluster-node-timeout 1 s); a graceful CLUSTER
// FAILOVER promoted in 23–212 ms, and a call caught in it took up to 29 ms
// on a quiet machine, 214–420 ms on one busy with other work. A call
// past the timeout is decided locally under the bounds above rather than
// held: raise Timeout (say, to 100–250 ms) only where a slower answer costs
// less than a local decision, or where Redis is far. A call that finds
// its connection dropped starts a new one in the background: its TCP
// connect and TLS handshake go on past the call's deadline (for up to 5 s),
// and the connection is kept for the next call (for up to 10 s; the
// store's Close ends both), which spends only HELLO on it, then its own
// round trip; a call that times out leaves its connection in place for
// the next (one that answers nothing, not even a PING, for about a second
// plus Timeout is dropped). So Timeout must
// exceed a round trip to Redis, plus its time to decide, whatever the
// connection's handshakes cost: the call that makes a new connection,
// like one that finds Redis without its scripts, spends two and fails
// when Timeout holds only one, and the next call decides; the calls that
// waited for the connection it gave up on are sent again, each within its
// own deadline (a caller's short deadline fails its own call only). The default
// suits a Redis up to about 20 ms away (round trip), over TLS or not. An
// attempt of Open's to connect that times out is logged with the timeout
// and what it bounds.
//
// # Leased quota
//
// With Options.Lease, Open's store decides most checks of leased limits in
// memory (Leased): an instance takes a lease of n units of a key's limit in
// the apply.lua run of a check, as one admission of cost + n, which the
// shared state counts as admitted at that moment g, and admits up to n
// units from it without a round trip
// until it is spent or ends. Units leased are units the shared state
// already counted, so the fleet admits no more than it would have — if a
// unit spent at u, later than the g it was counted at, cannot count in a
// window or a span the shared state did not count it in. Per algorithm:
//
//   - Fixed window: a lease ends with the window it was taken in. Every
//     unit spent in a window was counted in that window at g, before it
//     was spent: per window, units spent ≤ units the shared state counted
//     ≤ Q.
//   - Sliding window counter: a lease ends with its window too. Let a
//     unit be spent at u in window k. The shared counts of window k−1 and
//     k hold at least what was spent in them, since every spent unit was
//     counted earlier in the same window and a unit given back was never
//     spent. The shared state admitted its last check of window k at some
//     g′ ≤ u with ⌊prev·(W−e(g′))/W⌋ + cur ≤ Q, and the weight (W−e)/W only
//     falls as u passes g′: so the estimate of the units really spent, at
//     u, is at most Q — exactly what the counter promises.
//   - Token bucket, GCRA, leaky-bucket meter: a unit counted at g and spent
//     at u ∈ [g, g+L] moves an admission later by up to L. The admissions
//     spent in any span [s, t] were counted in [s−L, t], where the shared
//     bucket, of burst B′, admitted at most B′ + r·(t−s+L). Every check of
//     a leased bucket is decided by the shared state with B′ = B − h, where
//     h = ⌈r·L⌉ is what refills in L: spent ≤ B + r·(t−s), the bucket's own
//     promise. L is the time a quarter of the burst takes to refill (at
//     most Options.Lease.MaxAge); a bucket of burst 1, or whose L would be
//     under a millisecond, is not leased (internal/leasehold, by which
//     configuration judges costs too). The cost is a burst smaller by h
//     for the whole fleet; the long-run rate is the bucket's. Holding back
//     h per lease instead would cost h per lease taken, at every refill.
//     A check whose cost is above B − h, though not above B, is therefore
//     never admitted: it is refused as a cost above a burst is, RetryAfter
//     sluice.Never and nothing consumed, in one round trip. Deciding it by
//     B would spend B + h in an instant beside a lease of h spent at the
//     end of its L; configuration refuses such a cost at load.
//   - Sliding log and concurrency are decided per request. A log admits by
//     the timestamps of its entries, and a unit spent after its entry would
//     count in spans the log never checked: exactness per request is the
//     reason to choose it. A concurrency unit comes back when the work that
//     holds it ends, not with time, so there is no span to lease in. A
//     leaky-bucket queue tells each admission its own delay; a shadow limit
//     never refuses, so a lease would save nothing.
//
// A lease's end is measured on the instance's own monotonic clock from
// before its take was sent: the take ran later by Redis's clock, so the
// lease ends no later than its window (or L) does there. Unspent units go
// back (lua/lease.lua, through each algorithm's undo as a refund's do: a
// window only while it still counts the lease's window, a bucket only what
// has not refilled since the take) when a lease has ended, is replaced, on
// Leased.Return (a reload) and Close, and when it has gone unused for
// Options.Lease.Idle while its units could matter to other instances: the
// shared remainder as last heard is scarce (its share, not the size asked,
// bounds takes), or a lease of its size on every instance would hold more
// than 1% of the limit's burst — unless the shared limit was, as last
// heard, full again by then, when the undo would change nothing. An unused
// lease of a limit with plenty left keeps its units until it ends (a
// window's lease lives to its window's end, up to Options.Lease.MaxAge, a
// minute by default): giving back would cost a script run, and a take
// again when the key returns. A call of several
// checks is admitted from leases only if every check's lease covers it;
// otherwise the leases it needs are taken in one script run, the covered
// checks' units held aside until it answers, and a refusal spends nothing
// of any lease. Units held aside are spent only if their lease still holds
// once the run answers; if one ended meanwhile, the call is decided
// exactly instead, all its checks together, and what the run took for
// the call's own costs goes to the leases it took. A key's first call on
// an instance takes a lease too, sized as if the shared remainder were the limit's burst (it is at most that):
// a key seen a few times by an instance costs one round trip, not two. Near exhaustion — when the shared remainder as last heard,
// not the size the instance asks for, bounds a take — the run is
// lua/lease_take.lua instead: it decides the call's own costs
// all-or-nothing as apply.lua does, then adds to each check up to its
// lease's units, as many as are left, written as one admission of cost +
// lease; its refusal is the call's own, and no second run decides the
// call. Elsewhere cost and lease are asked together, batched with other
// calls, and a refusal (rare while the remainder is plentiful) is decided
// again exactly, as is one of keys in several Cluster slots. A call that a lease cannot serve goes to the over-limit
// cache and the failover as without leases. Units given back are capacity
// coming back other than with time: the cache forgets the refusals it
// remembers of their keys, before the give-back is sent and again once it
// has answered, so that it never refuses what they let Redis admit. A
// key's next lease is taken
// in the background when its current one is down to a quarter of its units
// or of its life, one take at a time per key and limit, so that a call
// waits for Redis only when no lease of its key covers it.
//
// What leases cost in admissions: for windows, the units of leases that
// end unspent — kept unused while the limit has plenty left, at most 1% of
// it per key (see above), else given back after Idle; for a bucket, its
// hold-back h as well, and of a lease that ends unspent what the bucket
// refilled between its take and its give-back (every tick refilled counts
// as the lease's: what the bucket missed before the take may have counted
// another lease given back since, so no more can be given back without
// returning units the bucket has refilled). The shared bucket decides
// every unit with burst B − h, so
// a fleet offered more than the limit from a full bucket for a span d
// admits at most B − h + r·d where the limit promises B + r·d: at most
// h/(B + r·d) less, once; afterwards r per unit of time, as the limit.
//
// What a crash costs: the units of its unspent leases stay counted, at most
// MaxUnits per key and limit per instance, until the lease's window ends,
// or a bucket refills them (at most MaxUnits units, refilled at Q per W).
// What an outage costs: nothing more — an instance keeps spending the
// leases it holds, which the shared state counted before it failed, and
// decides the rest by OnStoreError; the failover's bounds apply to those,
// since it takes no lease while its failover falls back, returns or owes
// Redis what it admitted locally on the key (failover.Store.Direct): those
// checks go through the failover, which charges first. A lease and the
// fallback never admit the same units: the fallback starts a key from its
// share of what Redis said was left after the instance's last take of it
// (failover.Store.Heard, with the time Redis decided it: a late reply of an
// earlier take never raises what a later answer left, and a take a
// promoted replica decided by a clock that is behind still lowers it), which the units leased are
// not part of, so the
// failover's bounds hold with Rᵢ that remainder. An instance alone admits
// across an outage, from its leases and its fallback together, at most
// the limit. A shared state
// that is lost — a master back at its address without its data, a
// replica that took over without its predecessor's last writes (see
// Failover) — no longer counts the leases it gave: once Open's store sees
// the loss (its watch, every 100 ms), it ends every lease it holds, its
// units neither spent nor given back (LeaseStats.Lost; given back, they
// would be taken out of what the new state counts for others). Until it
// sees it, up to a watch period after the new master first answers, an
// instance may still spend them: units the lost state counted, as the
// fallback's admissions before the loss are (see Failover).
//
// A state that Redis evicts (or that is deleted) no longer counts the
// leases taken from it either: lua/lease.lua gives back nothing taken
// before the state there now was created (see Keys; LeaseStats.Lost counts
// them), and their instances may still spend them until they end, as
// after a Reset (below).
//
// A state that Reset forgets no longer counts the leases taken from it
// either. Their unspent units are never given back to the fresh state,
// whose count they would lower below what it admitted: lease.lua gives
// back nothing taken at or before the reset that the key beside the state
// records (see Keys; LeaseStats.Lost counts them). The instance that
// resets ends its own leases of the key taken at or before the reset,
// neither spending nor giving back their units, and every other instance
// ends its own when its watch reads the reset's confirmation on
// sluice:resets (every 100 ms; see Keys), which carries the reset's time
// on the shared state's clock, the clock every take is dated by: a lease
// taken after the reset, from the fresh state, is kept and spent. Until
// then the leases taken before may still be spent: on top of what the
// fresh state admits, at most what an instance spends of them within a
// watch period — and, should its reads of the stream fail meanwhile, until
// they end: at most MaxUnits per key and limit per instance (see
// Guarded.Reset). A Reset announces itself on the stream before it resets:
// one whose announcement Redis does not take fails, having forgotten
// nothing — unless Redis refused it for want of memory and the store
// leases none of the limits reset, which then resets without it (an
// operator freeing a client on a full Redis) — and one whose confirmation Redis does not take after the reset
// ends the others' leases of the key all the same, every one they hold
// once the confirmation is overdue (the larger of their Timeout and 100
// ms, plus 100 ms, after they read the announcement), a lease taken since
// the reset included (its units lost: never more admitted). So do resets
// by instances of versions that confirm nothing.
//
// # Errors
//
// An error is never a decision. Every failure to decide — connection
// refused or lost, timeout, a Redis error reply such as LOADING or OOM —
// wraps sluice.ErrStoreUnavailable, so that callers apply their failure
// OnError rule; only a context cancelled by the caller does not.
package redis
