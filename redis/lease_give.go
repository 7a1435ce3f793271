package redis

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// loadLeaseScript builds lease.lua with every family, once.
var loadLeaseScript = onceScript("lease.lua")

// onceScript returns a function that builds the script main with every
// family the first time it is called, and returns that script (or error)
// every time.
func onceScript(main string) func() (*rueidis.Lua, error) {
	load := onceSource(main)
	return func() (*rueidis.Lua, error) {
		sc, err := load()
		if err != nil {
			return nil, err
		}
		return sc.lua, nil
	}
}

// sourced is a script with its source and SHA-1, for a run followed by a
// WAIT (Store.execScript).
type sourced struct {
	lua      *rueidis.Lua
	src, sha string
}

// onceSource is onceScript that also keeps the script's source.
func onceSource(main string) func() (*sourced, error) {
	return sync.OnceValues(func() (*sourced, error) {
		src, err := luaSource(luaFiles, allFamilies, main)
		if err != nil {
			return nil, err
		}
		return &sourced{lua: rueidis.NewLuaScript(src), src: src, sha: sha1Hex(src)}, nil
	})
}

// retire ends e's leases (e is locked): their unspent units are queued to
// go back. When they end unspent rather than replaced (idle or past their
// deadline), the next take asks for what they spent.
func (l *Leased) retire(e *leaseEntry, unspent bool) {
	if unspent && e.held() > 0 {
		e.size = max(e.cur.leased+e.next.leased-e.held(), 1)
	}
	now := l.clock()
	l.retireLease(e, &e.cur, now)
	l.retireLease(e, &e.next, now)
}

// retireLease ends ls, one of e's leases (e is locked), at now: its
// unspent units are queued to go back, unless the shared limit was, as
// last heard, full again by now — then giving back changes nothing there,
// unless another instance has taken since, and keeping them errs on the
// side of refusing.
func (l *Leased) retireLease(e *leaseEntry, ls *lease, now int64) {
	if ls.units > 0 {
		if now >= ls.deadline {
			l.stats.expired.Add(ls.units)
		}
		if now < e.reset {
			l.queue(sluice.Check{Key: e.key, Limit: e.plan.shared, Cost: ls.units}, ls.mark, ls.at, ls.epoch)
		}
	}
	*ls = lease{}
}

// queue adds units to give back with their take's undo mark and shared
// time at, unless their take was sent in an epoch before the shared state
// was last lost (see drop).
func (l *Leased) queue(c sluice.Check, mark string, at int64, ep uint64) {
	l.pendingMu.Lock()
	defer l.pendingMu.Unlock()
	if ep != l.epoch.Load() {
		l.stats.lost.Add(c.Cost)
		return
	}
	l.pending = append(l.pending, c)
	l.marks = append(l.marks, mark)
	l.ats = append(l.ats, at)
}

// sweep gives back the units of leases idle (leaseEntry.idle) or past
// their deadline, and forgets entries long unused, until Close.
func (l *Leased) sweep() {
	defer close(l.done)
	tick := time.NewTicker(min(l.opts.Idle/2, 100*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		l.retireIf(func(e *leaseEntry, now int64) bool {
			return e.idle(now, l.opts.Idle.Microseconds(), l.opts.MaxUnits, l.share) ||
				now >= e.cur.deadline && (e.next.units == 0 || now >= e.next.deadline)
		})
		l.flush(context.Background())
	}
}

// forgetAfter is how long an entry without a lease is kept unused: what
// it knows (the shared remainder, the size of its takes) is stale by then.
const forgetAfter = 10 * time.Second

// retireIf retires the lease of every entry for which end reports true,
// and forgets entries without a lease unused for forgetAfter (ten MaxAge
// if shorter).
func (l *Leased) retireIf(end func(e *leaseEntry, now int64) bool) {
	l.mu.RLock()
	all := make([]*leaseEntry, 0, len(l.entries))
	for _, e := range l.entries {
		all = append(all, e)
	}
	l.mu.RUnlock()
	forget := min(forgetAfter, 10*l.opts.MaxAge).Microseconds()
	var old []*leaseEntry
	for _, e := range all {
		now := l.clock()
		e.mu.Lock()
		if e.held() > 0 && end(e, now) {
			l.retire(e, true)
		}
		if e.held() == 0 && e.taking == nil && now-max(e.used, e.heard) > forget {
			e.dead = true
			old = append(old, e)
		}
		e.mu.Unlock()
	}
	if len(old) > 0 {
		l.mu.Lock()
		for _, e := range old {
			if k := (leaseKey{e.key, e.limit.ID()}); l.entries[k] == e {
				delete(l.entries, k)
			}
		}
		l.mu.Unlock()
	}
}

// giveBackRun bounds the keys of one give-back script run: Redis runs a
// script whole, every other call waiting, at a few µs a key, so that a
// flood of keys whose leases end together goes back in runs of about a
// millisecond each, one after another, each within the store's timeout.
const giveBackRun = 256

// flush gives back every queued unit, in runs of at most giveBackRun keys
// sent one after another. Units whose give-back fails are dropped, and so
// are those of the runs after it: the shared state keeps them counted,
// which errs on the side of refusing until their window ends or their
// bucket refills. Units whose state was reset since their take are not
// given back (LeaseStats.Lost).
func (l *Leased) flush(ctx context.Context) error {
	l.pendingMu.Lock()
	checks, marks, ats := l.pending, l.marks, l.ats
	l.pending, l.marks, l.ats = nil, nil, nil
	l.pendingMu.Unlock()
	for len(checks) > 0 {
		n := min(len(checks), giveBackRun)
		if err := l.giveBack(ctx, checks[:n], marks[:n], ats[:n]); err != nil {
			return err
		}
		checks, marks, ats = checks[n:], marks[n:], ats[n:]
	}
	return nil
}

// giveBack gives back checks in one run per Cluster slot and counts them.
// Their keys are told to l.returned before the run is sent, so that calls
// already on their way to Redis do not make an over-limit cache remember
// refusals the units given back may end, and again once it has answered or
// failed (a run that failed may have run), so that none answered by Redis
// before it ran is remembered either: the cache never goes on refusing a
// cost that the units given back let Redis admit.
func (l *Leased) giveBack(ctx context.Context, checks []sluice.Check, marks []string, ats []int64) error {
	l.tellReturned(checks)
	defer l.tellReturned(checks)
	l.stats.giveBacks.Add(1)
	forgotten, err := l.shared.giveBack(ctx, checks, marks, ats)
	if err != nil {
		if ctx.Err() == nil {
			l.stats.failures.Add(1)
		}
		return err
	}
	var n int64
	for i := range checks {
		n += checks[i].Cost
	}
	l.stats.returned.Add(n - forgotten)
	l.stats.lost.Add(forgotten)
	return nil
}

// tellReturned tells l.returned, if set, the key of each of checks.
func (l *Leased) tellReturned(checks []sluice.Check) {
	if l.returned == nil {
		return
	}
	for i := range checks {
		l.returned(checks[i].Key)
	}
}

// Return gives back the unspent units of every lease now, as on a
// configuration reload, in script runs of at most 256 keys (per Cluster
// slot) one after another, each bounded by the store's timeout. An error wraps sluice.ErrStoreUnavailable; the units it could not
// give back stay counted until their window ends or their bucket refills.
func (l *Leased) Return(ctx context.Context) error {
	if l.next == nil {
		return nil
	}
	l.retireIf(func(*leaseEntry, int64) bool { return true })
	return l.flush(ctx)
}

// Close waits for the leases being taken, in the background or by calls
// begun before it, stops the background give-back and takes, and gives
// back every lease's unspent units (see Return), reporting whether that
// succeeded. Calls
// from the moment Close begins still work, through the store behind,
// check by check as without leases (a bucket's by its shared limit): a
// lease they took would never go back. Close is idempotent; it closes
// neither that store nor Redis.
func (l *Leased) Close() error {
	if l.next == nil {
		return nil
	}
	var err error
	l.closed.Do(func() {
		l.shut.Store(true)
		l.refillMu.Lock()
		l.closing = true
		l.refillMu.Unlock()
		l.refills.Wait()
		close(l.stop)
		<-l.done
		err = l.Return(context.Background())
	})
	return err
}

// giveBack implements leaseBackend: one lease.lua run per Cluster slot
// (one in all off a Cluster), all sent at once, each reading its states'
// reset keys in their slot.
func (s *Store) giveBack(ctx context.Context, checks []sluice.Check, marks []string, ats []int64) (int64, error) {
	if err := s.unusable("lease script"); err != nil {
		return 0, err
	}
	lua, err := loadLeaseScript()
	if err != nil {
		return 0, s.fail("lease script", err)
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	keys := make([]string, len(checks))
	for i := range checks {
		keys[i] = Key(checks[i].Key, checks[i].Limit.ID())
	}
	groups := s.groups(keys)
	results := make([]rueidis.RedisResult, len(groups))
	var wg sync.WaitGroup
	for j, group := range groups {
		gk := make([]string, 0, 2*len(group))
		args := make([]string, 0, len(group)*(checkArgs+2))
		for _, i := range group {
			gk = append(gk, keys[i])
			if args, err = appendCheckArgs(args, &checks[i]); err != nil {
				return 0, err
			}
			args = append(args, marks[i], strconv.FormatInt(ats[i], 10))
		}
		for _, i := range group {
			gk = append(gk, resetKey(keys[i]))
		}
		wg.Go(func() { results[j] = s.exec(ctx, lua, gk, args) })
	}
	wg.Wait()
	var forgotten int64
	for _, r := range results {
		n, err := r.AsInt64()
		if err != nil {
			return 0, s.fail("lease script", err)
		}
		forgotten += n
	}
	return forgotten, nil
}

// applyAt implements leaseBackend.
func (s *Store) applyAt(ctx context.Context, checks []sluice.Check, out []sluice.Status, ats []int64) error {
	_, err := s.apply(ctx, checks, out, ats)
	return err
}

// applyAt implements leaseBackend.
func (l *lazy) applyAt(ctx context.Context, checks []sluice.Check, out []sluice.Status, ats []int64) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	_, err = s.apply(ctx, checks, out, ats)
	return err
}

// giveBack implements leaseBackend.
func (l *lazy) giveBack(ctx context.Context, checks []sluice.Check, marks []string, ats []int64) (int64, error) {
	s, err := l.store()
	if err != nil {
		return 0, fmt.Errorf("lease give-back: %w", err)
	}
	return s.giveBack(ctx, checks, marks, ats)
}
