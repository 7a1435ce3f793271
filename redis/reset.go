package redis

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// loadResetScript builds reset.lua, once.
var loadResetScript = onceScript("reset.lua")

// Reset forgets key's states under limits, as if key had never been seen
// by them: one reset.lua run (on a Cluster too: every key of a subject lies
// in one slot, see Key), bounded by the store's timeout. It reports how
// many of them Redis held. An error wraps sluice.ErrStoreUnavailable;
// nothing is then known to be forgotten.
//
// Units that a Leased (of this or another instance) leased from a state
// before its reset were counted by that state alone: they are never given
// back to the fresh one, whose count they would lower below what it
// admitted; nor is a receipt from before it refunded into the fresh one
// (see Refund), nor a concurrency lease from before it given back out of
// the fresh lease book (see Release), which would free a request in
// flight since. So that a give-back can tell, Reset leaves beside each
// state a key recording the time of the reset,
// sluice:reset:{<subject>}:<limit-name>, which lives as long as such a
// give-back could still change the state (the window and the next; a
// bucket's refill of its burst; a log's window, in which a receipt from
// before the reset names the instant of entries the log charged since in
// the reset's µs; a lease's time), and a second more. That
// time is no earlier than any the deleted state records having counted (a
// log's newest entry, a lease stamped ahead of the clock; a state's
// creation, a fixed window's last charge or a sliding counter's window
// start, ahead of a clock that stepped back), and a
// concurrency limit's lease book starts afresh with an entry of no units
// at that time, so that every lease taken since is stamped after it, as on
// the memory store. Before that run, it appends to the
// stream sluice:resets an announcement of the reset of every leasable
// limit, and after it a confirmation with the reset's time on Redis's
// clock, on which the instances of Open's store end their leases of them
// taken at or before it (see Guarded.Reset); a lease taken after it, from
// the fresh state, is kept. Should Redis not take the confirmation, the
// reset stands and the instances end every lease of those limits they
// hold once its confirmation is overdue. A lease's units that its
// instance still holds may be spent after the reset until it reads the
// notice, on top of what the fresh state admits.
//
// Should Redis not take the announcement, nothing is reset, unless Redis
// refused it for want of memory (full under maxmemory-policy noeviction):
// the reset then runs all the same, its first write a deletion, which a
// full Redis lets through, and frees the client. Instances that lease
// those limits from the same Redis learn of it only from its
// confirmation, should Redis have room for it by then; else they may
// spend the leases they took before it until those end, on top of what
// the fresh state admits (at most LeaseOptions.MaxUnits per key and limit
// per instance). A Guarded that leases one of the limits does not reset
// them so (see Guarded.Reset).
func (s *Store) Reset(ctx context.Context, key string, limits []sluice.Limit) (int, error) {
	n, _, err := s.reset(ctx, key, limits, false)
	return n, err
}

// reset is Reset that also returns the shared state's time of the reset,
// µs since sluice.Epoch (the time its reset keys record): a lease taken at
// or before it was taken from a state it forgot, one taken after it from
// the fresh state. After the reset it appends to resetStream the notice
// that it ran, at that time; if Redis does not take that one, the reset
// stands and the instances end every lease of the limits once the
// announcement has gone unconfirmed for a while (see readResets). leases
// says whether the caller leases one of the limits: if so, a reset whose
// announcement Redis does not take fails, having reset nothing; if not,
// one that Redis refused for want of memory runs without it.
func (s *Store) reset(ctx context.Context, key string, limits []sluice.Limit, leases bool) (int, int64, error) {
	if len(limits) == 0 {
		return 0, 0, nil
	}
	if err := s.unusable("reset"); err != nil {
		return 0, 0, err
	}
	lua, err := loadResetScript()
	if err != nil {
		return 0, 0, s.fail("reset script", err)
	}
	keys := make([]string, len(limits))
	for i, l := range limits {
		keys[i] = Key(key, l.ID())
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	notice := leasableNotice(key, limits)
	if notice != nil {
		if err := s.announceReset(ctx, notice); err != nil && (leases || !isOutOfMemory(err)) {
			return 0, 0, s.fail("reset notice", err)
		}
	}
	groups := s.groups(keys)
	runs := make([]rueidis.LuaExec, len(groups))
	for j, idx := range groups {
		gk := make([]string, 0, 2*len(idx))
		args := make([]string, 1, 1+2*len(idx))
		args[0] = s.timeArg()
		for _, i := range idx {
			gk = append(gk, keys[i])
			args = append(args, strconv.FormatInt(resetKeyLife(limits[i]), 10))
		}
		for _, i := range idx {
			gk = append(gk, resetKey(keys[i]))
			args = append(args, bookTag(limits[i]))
		}
		runs[j] = rueidis.LuaExec{Keys: gk, Args: args}
	}
	results := make([]rueidis.RedisResult, len(runs))
	var wg sync.WaitGroup
	for j := range runs {
		wg.Go(func() { results[j] = s.exec(ctx, lua, runs[j].Keys, runs[j].Args) })
	}
	wg.Wait()
	total, at := 0, int64(math.MinInt64)
	for _, r := range results {
		reply, err := r.AsIntSlice()
		if err == nil && len(reply) != 2 {
			err = fmt.Errorf("reply of %d entries, want 2", len(reply))
		}
		if err != nil {
			return 0, 0, s.fail("reset", err)
		}
		total += int(reply[0])
		at = max(at, reply[1])
	}
	if notice != nil {
		// The reset stands whether or not Redis takes the confirmation:
		// without it, the announcement ends the leases (see readResets),
		// if Redis took that.
		_ = s.confirmReset(ctx, notice, at)
	}
	return total, at, nil
}

// resetKey returns the key that records when the state at stateKey (see
// Key) was last reset: "sluice:reset:" in place of its "sluice:", with the
// same hash tag, so in the same Cluster slot, and never a state key.
func resetKey(stateKey string) string {
	return "sluice:reset:" + strings.TrimPrefix(stateKey, "sluice:")
}

// resetKeyLife returns how long, in ms, reset.lua keeps the reset key of
// l's state: resetLife, or for a concurrency limit, as long as a lease of
// its book taken before the reset could still be given back (release.lua)
// — its lease time — and a second more, and for a sliding log, as long as
// a receipt from before the reset could still name an entry of the log
// written since (refund_charge.lua: a receipt names its entry's instant,
// which a log charged in the reset's µs also holds) — its window — and a
// second more, as the memory store remembers such a reset (memory's
// resetLife); 0 for a limit nothing taken before a reset reaches the fresh
// state of.
func resetKeyLife(l sluice.Limit) int64 {
	switch l.Algorithm() {
	case sluice.AlgorithmConcurrency, sluice.AlgorithmSlidingLog:
		if l.Err() == nil && l.Quantity() > 0 {
			return min(int64(l.Window()/time.Microsecond), 1<<50)/1000 + 1000
		}
		return 0
	}
	return resetLife(l)
}

// bookTag returns the tag (g, see lua/state.lua) of l's lease book, which
// reset.lua begins afresh at the reset's time (see Store.Reset), for a
// concurrency limit; else "".
func bookTag(l sluice.Limit) string {
	if l.Algorithm() != sluice.AlgorithmConcurrency || resetKeyLife(l) == 0 {
		return ""
	}
	return strconv.Itoa(int(sluice.AlgorithmConcurrency))
}

// resetLife returns how long, in ms, a reset of l's state must be
// remembered for a quota lease (see Leased) taken before it: as long as
// it could still be given back to a state written after it with any
// effect (see lease.lua) — a window's lease in its window and, for a
// sliding counter, the next; a bucket's until its whole burst has
// refilled — and a second more; 0 for an algorithm that is never leased.
func resetLife(l sluice.Limit) int64 {
	if l.Err() != nil || l.Quantity() <= 0 {
		return 0
	}
	w := int64(l.Window() / time.Microsecond)
	var life int64
	switch l.Algorithm() {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
		life = 2 * w
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmGCRA, sluice.AlgorithmLeakyBucket:
		life = ceilMulDiv(max(l.Burst(), 1), w, l.Quantity())
	default:
		return 0
	}
	return min(life, 1<<50)/1000 + 1000
}

// Reset forgets key's states under limits in Redis (Store.Reset), then in
// the over-limit cache, the local fallback and the failover (what Redis
// last said of key, and what the fallback admitted and has not charged
// to Redis: failover.Store.Forget), so that none of them answers for Redis
// with the old state, and ends the leases this instance holds of them
// taken at or before the reset (see Leased), neither spending nor giving
// back their units. It reports how many states Redis held. Units that
// another instance leased before the reset are never given back to the
// fresh state either (see Store.Reset), and that instance ends those
// leases when its watch reads the reset's confirmation, within 100 ms,
// keeping those it took from the fresh state; until then (or, should its
// reads fail, until their lease ends) it may spend them on top of what the
// fresh state admits: at most LeaseOptions.MaxUnits per key and limit per
// instance.
//
// On a Redis full under maxmemory-policy noeviction, a reset of limits
// this store leases (Options.Lease) fails, having reset nothing: Redis
// refuses its announcement, without which the other instances could spend
// the leases they took before the reset until those end. One of limits it
// does not lease runs without the announcement, as Store.Reset does.
//
// An error wraps sluice.ErrStoreUnavailable: Redis could not be reached,
// or did not answer, and the reset may or may not have run there. The
// local fallback and the failover then forget nothing — a fallback
// deciding key meanwhile goes on from what it admitted, and that is still
// charged to Redis — so that a reset that did not happen hands out no
// fresh quota. The cache forgets key's refusals all the same (forgetting
// one costs a round trip, never a wrong answer), and every lease this
// instance holds of key's limits ends, neither spent nor given back:
// whether the reset ran or not, that errs on the side of refusing.
func (g *Guarded) Reset(ctx context.Context, key string, limits []sluice.Limit) (int, error) {
	if g.failover == nil {
		return 0, errNoStore()
	}
	n, at, err := g.resetRedis(ctx, key, limits)
	g.cache.Invalidate(key)
	if g.leased != nil {
		if err == nil {
			g.leased.resetBefore(key, limitIDs(limits), at)
		} else {
			g.leased.reset(key, limits)
		}
	}
	if err != nil {
		return 0, err
	}
	g.local.Reset(key, limits)
	g.failover.Forget(key, limits)
	return n, nil
}

// resetRedis is Store.reset on the connected store.
func (g *Guarded) resetRedis(ctx context.Context, key string, limits []sluice.Limit) (int, int64, error) {
	s, err := g.redis.store()
	if err != nil {
		return 0, 0, fmt.Errorf("reset: %w", err)
	}
	return s.reset(ctx, key, limits, g.leasesAny(limits))
}

// leasesAny reports whether g leases the quota of one of limits.
func (g *Guarded) leasesAny(limits []sluice.Limit) bool {
	if g.leased == nil {
		return false
	}
	for _, l := range limits {
		if resetLife(l) > 0 && g.leased.opts.modeOf(l.ID()) == LeaseAuto {
			return true
		}
	}
	return false
}

// limitIDs returns the IDs of limits.
func limitIDs(limits []sluice.Limit) []string {
	ids := make([]string, len(limits))
	for i, l := range limits {
		ids[i] = l.ID()
	}
	return ids
}
