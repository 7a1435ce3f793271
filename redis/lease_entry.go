package redis

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/sluice-dev/sluice"
)

// lease is the units of one take that an instance may spend.
type lease struct {
	units    int64  // unspent
	leased   int64  // units when taken
	taken    int64  // local µs the take was sent
	deadline int64  // local µs before which they may be spent
	mark     string // the take's undo mark
	at       int64  // the shared state's µs of the take
	gen      uint64 // which of the entry's leases this is
	epoch    uint64 // Leased.epoch when its take was sent
}

// lowWater reports whether l, which has spent spent units by now, is
// spent or aged enough that the next lease should be taken now, in the
// background, so that no call waits for it: three quarters of its units
// or of its life gone.
func (l *lease) lowWater(now int64) bool {
	return 4*l.units <= l.leased || 4*(l.deadline-now) <= l.deadline-l.taken
}

// leaseEntry is one key's limit as an instance leases it.
type leaseEntry struct {
	mu    sync.Mutex
	id    uint64 // lock order
	key   string // Check.Key
	limit sluice.Limit
	plan  leasePlan
	ok    bool // the limit is leased (plan is valid)
	dead  bool // replaced in the map: look again

	gen    uint64 // leases installed
	cur    lease  // spent first
	next   lease  // taken in the background while cur was spent; spent once cur cannot cover a check
	size   int64  // units a take asks for
	used   int64  // local µs of the last spend
	reset  int64  // local µs when the shared limit is full again, as of the last answer
	shared int64  // the shared remainder last heard of; -1: unknown
	heard  int64  // local µs it was heard
	// resetAt is the shared state's µs of the latest reset of the key's
	// limit read (math.MinInt64: none): a take the shared state ran at or
	// before it was taken from a state the reset forgot.
	resetAt int64

	taking chan struct{} // non-nil while a take for it runs, closed when it ends
}

// leased returns e if its limit is leased, else nil.
func (e *leaseEntry) leased() *leaseEntry {
	if !e.ok {
		return nil
	}
	return e
}

// beyond reports whether a check of cost is more than e's shared state
// ever admits at once: its shared burst, B − h. Such a check is refused as
// a cost above a limit's burst is, with RetryAfter sluice.Never and
// nothing consumed, by exact, which decides it by the shared limit in one
// round trip (a take of cost and lease would only be refused first).
//
// It is not decided by the full burst B instead, which would break the
// fleet's promise that the hold-back keeps (see the package documentation,
// Leased quota): units counted at g may be spent up to L later, and a
// check decided by B finds the bucket as full as B allows once they have
// refilled. A lease of h units taken from a full bucket at g and spent
// just before g + L, and a cost of B admitted then by the full burst (the
// h units have refilled by then), spend B + h within an instant where the
// bucket promises B (a GCRA of burst 10 holding back 2: 12). Every check
// of a leased bucket must find at most B − h.
func (e *leaseEntry) beyond(cost int64) bool {
	return cost > e.plan.shared.Burst()
}

// held returns the unspent units of e's leases.
func (e *leaseEntry) held() int64 { return e.cur.units + e.next.units }

// covers reports whether e's leases can spend cost units at now, moving
// to the next lease (and queueing the current one's units to go back) when
// the current one cannot.
func (l *Leased) covers(e *leaseEntry, cost, now int64) bool {
	if e.cur.units >= cost && now < e.cur.deadline {
		return true
	}
	if e.next.units < cost || now >= e.next.deadline {
		return false
	}
	l.retireLease(e, &e.cur, now)
	e.cur, e.next = e.next, lease{}
	return true
}

// want returns the units a take for e asks for beyond its check's cost
// at now: 0 (decide exactly) while the shared remainder is stale, else
// e.size capped by maxUnits and the remainder's share, less what e's
// leases still hold.
func (e *leaseEntry) want(now, maxUnits, share, stale int64) int64 {
	if e.shared >= 0 && now-e.heard > stale {
		return 0
	}
	return max(min(e.size, maxUnits, e.remainder()/share)-e.held(), 0)
}

// remainder returns the shared remainder as last heard or, before the
// first answer, the most it can be: the shared limit's burst. A key's
// first call thus takes a lease at once when the limit is large enough
// for one (its take asks cost and lease together, and a refusal is
// decided again exactly), and a small limit's first call goes to
// lease_take.lua (see scarce), which is never refused for the lease.
func (e *leaseEntry) remainder() int64 {
	if e.shared < 0 {
		return e.plan.shared.Burst()
	}
	return e.shared
}

// scarce reports whether the shared remainder as last heard, rather than
// the size e asks for, bounds e's next take (see want): the remainder is
// running out, and a take of cost and lease together may be refused for
// the lease alone.
func (e *leaseEntry) scarce(maxUnits, share int64) bool {
	return min(e.size, maxUnits) >= e.remainder()/share
}

// hear records the shared state's answer st, heard at now, unless st
// measures nothing of it (Undecided, Unavailable or NoRoom: no store
// decided the check, or its Remaining and ResetAfter tell no use).
func (e *leaseEntry) hear(st *sluice.Status, now int64) {
	if st.Undecided || st.Unavailable || st.NoRoom {
		return
	}
	e.shared, e.heard = st.Remaining, now
	e.reset = now + st.ResetAfter.Microseconds()
}

// strandShare bounds, as a share of a limit's burst, the units that the
// leases of one key, on every instance together, may keep unused past
// LeaseOptions.Idle while the shared remainder is plentiful (see idle).
const strandShare = 100 // 1%

// idle reports whether e's leases have gone unused long enough at now
// for their units to go back before they end: unused for idle µs
// (LeaseOptions.Idle), and their units could matter to other instances —
// the shared remainder as last heard is scarce (see scarce), or instances
// leases this size, one per instance, would hold more than 1% of the
// limit's burst. Otherwise they are kept until they end: giving back
// costs a script run, a take again if the key returns, and the units kept
// are at most 1% of the limit per key, from a remainder that left every
// instance plenty when last heard.
func (e *leaseEntry) idle(now, idle, maxUnits, share int64) bool {
	if now-e.used < idle {
		return false
	}
	return e.scarce(maxUnits, share) || e.held() > e.plan.shared.Burst()/(strandShare*share/2)
}

// status is the status of a check spent from e's lease at now.
func (e *leaseEntry) status(now int64) sluice.Status {
	return sluice.Status{
		Allowed:    true,
		Remaining:  min(max(e.shared, 0)+e.held(), e.limit.Burst()),
		ResetAfter: micros(e.reset - now),
	}
}

// lockAll locks es in lock order and returns the function that unlocks
// them.
func lockAll(es []*leaseEntry) (sorted []*leaseEntry) {
	sorted = slices.Clone(es)
	slices.SortFunc(sorted, func(a, b *leaseEntry) int {
		if a.id < b.id {
			return -1
		}
		return 1
	})
	for _, e := range sorted {
		e.mu.Lock()
	}
	return sorted
}

func unlockAll(sorted []*leaseEntry) {
	for _, e := range sorted {
		e.mu.Unlock()
	}
}

// held is a covered check's units set aside while a call's takes run.
type held struct {
	e     *leaseEntry
	gen   uint64
	cost  int64
	mark  string
	at    int64
	epoch uint64
	end   int64 // local µs the lease they were set aside from ends
}

// putBack returns h's units to the lease they were set aside from, or,
// when it was replaced meanwhile, queues them to go back as the replaced
// lease's units do (h.e is locked).
func (l *Leased) putBack(h *held) {
	if h.e.cur.gen == h.gen {
		h.e.cur.units += h.cost
		return
	}
	l.queue(sluice.Check{Key: h.e.key, Limit: h.e.plan.shared, Cost: h.cost}, h.mark, h.at, h.epoch)
}

// tryLeases decides checks (entries es) from leases, taking what is
// missing, or hands them to exact. It reports again when it waited for
// another take and the caller should try once more.
func (l *Leased) tryLeases(ctx context.Context, checks []sluice.Check, es []*leaseEntry, out []sluice.Status) (again bool, err error) {
	locked := lockAll(es)
	now := l.clock() // after the locks: a lease may end while a call waits for them
	all := true
	for i, e := range es {
		if e.dead {
			unlockAll(locked)
			return false, l.exact(ctx, checks, out)
		}
		if !l.covers(e, checks[i].Cost, now) {
			all = false
		}
	}
	if all { // decided in memory
		for i, e := range es {
			e.cur.units -= checks[i].Cost
			e.used = now
			out[i] = e.status(now)
			l.stats.spent.Add(checks[i].Cost)
			l.prefetch(e, now)
		}
		unlockAll(locked)
		l.stats.local.Add(1)
		return false, nil
	}
	for i, e := range es {
		if ch := e.taking; ch != nil && !l.covers(e, checks[i].Cost, now) { // a take runs: wait for it
			unlockAll(locked)
			select {
			case <-ch:
				return true, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
	}
	if l.direct != nil && !l.direct(checks) {
		unlockAll(locked)
		return false, l.exact(ctx, checks, out)
	}
	stale := int64(l.opts.MaxAge.Microseconds())
	var takes []int
	extra := make([]int64, len(es))
	scarce := false
	for i, e := range es {
		if l.covers(e, checks[i].Cost, now) {
			continue
		}
		extra[i] = e.want(now, l.opts.MaxUnits, l.share, stale)
		scarce = scarce || e.scarce(l.opts.MaxUnits, l.share)
		if extra[i] == 0 || now < l.down.Load() {
			unlockAll(locked)
			return false, l.exact(ctx, checks, out)
		}
		takes = append(takes, i)
	}
	if !l.refilling() { // Close has begun: a lease taken now would never go back
		unlockAll(locked)
		return false, l.exact(ctx, checks, out)
	}
	defer l.refills.Done()
	var aside []held
	for i, e := range es {
		if extra[i] == 0 {
			e.cur.units -= checks[i].Cost
			aside = append(aside, held{e, e.cur.gen, checks[i].Cost, e.cur.mark, e.cur.at, e.cur.epoch, e.cur.deadline})
		}
	}
	ch := make(chan struct{})
	for _, i := range takes {
		es[i].taking = ch
	}
	ep := l.epoch.Load()
	unlockAll(locked)
	l.stats.taking.Add(1)
	defer l.stats.taking.Add(-1)

	tk := make([]sluice.Check, len(takes))
	want, got, gs := make([]int64, len(takes)), make([]int64, len(takes)), make([]int64, len(takes))
	st := make([]sluice.Status, len(takes))
	for j, i := range takes {
		e := es[i]
		tk[j] = sluice.Check{Key: e.key, Limit: e.plan.shared, Cost: checks[i].Cost}
		want[j] = extra[i]
	}
	final, err := l.take(ctx, tk, want, st, got, gs, scarce)
	after := l.clock()
	admitted := err == nil
	for j := range st {
		admitted = admitted && st[j].Allowed
	}

	// Units set aside are spent at after, when the call is decided: a
	// lease that ended meanwhile no longer covers them (its window, or L,
	// is over by the shared state's clock). The call is then decided
	// exactly, all its checks together, and the takes' costs, counted by
	// the shared state, become units of the leases taken with them.
	ended := false
	for _, h := range aside {
		ended = ended || after >= h.end
	}
	spend := admitted && !ended
	decided := spend || final && !admitted

	locked = lockAll(es)
	for k := range aside {
		h := &aside[k]
		if spend {
			h.e.used = after
			out[slices.Index(es, h.e)] = h.e.status(after)
			l.stats.spent.Add(h.cost)
			continue
		}
		l.putBack(h) // a call its leases do not admit spends nothing of them
	}
	for j, i := range takes {
		e := es[i]
		e.taking = nil
		if err != nil {
			continue
		}
		e.hear(&st[j], now)
		units := got[j]
		if admitted && !spend {
			units += checks[i].Cost
		}
		if admitted && units > 0 {
			l.install(e, now, gs[j], units, ep)
		}
		if decided {
			out[i] = st[j]
			out[i].Remaining = min(st[j].Remaining+e.held(), e.limit.Burst())
		}
	}
	if !admitted && final {
		for _, h := range aside {
			out[slices.Index(es, h.e)] = h.e.status(after)
		}
	}
	unlockAll(locked)
	close(ch)
	if decided {
		return false, nil
	}
	if admitted { // an aside's lease ended while the takes ran
		return false, l.exact(ctx, checks, out)
	}
	// A caller that gave up (cancelled) says nothing of Redis; a deadline
	// that passed does, whoever set it: the failover bounds a call by the
	// store's Timeout, as a take's round trip is, and which of the two
	// ends first is chance.
	if err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		l.stats.failures.Add(1)
		l.down.Store(after + l.after)
	}
	return false, l.exact(ctx, checks, out)
}

// take takes leases for checks tk (one round trip): each check's own cost
// and want[j] units more, reported in got, all-or-nothing. Where scarce
// (the shared remainder bounds a take) and the keys lie in one slot, the
// costs are decided alone and each lease is what fits (lease_take.lua): a
// refusal is final, the call's own. Otherwise cost and lease are asked
// together in an apply.lua run, batched with other calls, and a refusal
// may be the leases': final is false and the caller decides the call
// exactly. gs[j] is the shared state's time of check j's decision, by
// which its lease ends and goes back. Redis's answer is told to the
// failover behind (heard).
func (l *Leased) take(ctx context.Context, tk []sluice.Check, want []int64, st []sluice.Status, got, gs []int64, scarce bool) (final bool, err error) {
	l.stats.roundTrips.Add(1)
	defer func() {
		if err == nil && l.heard != nil {
			l.heard(tk, st, gs)
		}
	}()
	if scarce {
		g, err := l.shared.take(ctx, tk, want, st, got)
		if !errors.Is(err, errTakeSlots) {
			for j := range gs {
				gs[j] = g // one slot
			}
			return err == nil, err
		}
	}
	all := slices.Clone(tk)
	for j := range all {
		all[j].Cost += want[j]
	}
	err = l.shared.applyAt(ctx, all, st, gs)
	copy(got, want)
	return false, err
}

// install makes units e's lease (e is locked), replacing what it held: a
// take at the shared state's time g by a call that started at local time
// now, in epoch ep. The next take asks for twice as much when the lease
// it replaces was spent within half its life. A take sent before the
// shared state was last lost (see drop) installs nothing: its units are
// lost with that state, and so are those of a take the shared state ran
// at or before a reset of the key read since (see resetBefore). Nor does a
// take for an entry forgotten meanwhile
// (its limit changed, its key was reset): its units go back.
func (l *Leased) install(e *leaseEntry, now, g, units int64, ep uint64) {
	if ep != l.epoch.Load() || g <= e.resetAt {
		l.stats.lost.Add(units)
		return
	}
	if e.dead {
		l.queue(sluice.Check{Key: e.key, Limit: e.plan.shared, Cost: units}, e.plan.mark(g), g, ep)
		return
	}
	if c := &e.cur; c.leased > 0 && c.units < 1 && now-c.taken < (c.deadline-c.taken)/2 {
		e.size = min(2*e.size, l.opts.MaxUnits)
	}
	l.retire(e, false)
	e.cur = l.newLease(e, now, g, units, ep)
	e.used = now
}

// newLease returns a lease of units of e from a take at the shared
// state's time g, sent at local time now in epoch ep. It may be spent until now + its life from g: the take ran no earlier
// than now, so the lease never outlives its window (or L) by the shared
// state's clock.
func (l *Leased) newLease(e *leaseEntry, now, g, units int64, ep uint64) lease {
	e.gen++
	l.stats.leases.Add(1)
	l.stats.leased.Add(units)
	return lease{
		units: units, leased: units, taken: now, gen: e.gen, epoch: ep, at: g,
		deadline: now + e.plan.lifeAt(g),
		mark:     e.plan.mark(g),
	}
}

// exact decides checks with the store behind, each check of a leased
// limit by its plan's shared limit (whether or not this instance holds a
// lease of it: every decision of a leased bucket must hold back the same
// burst), and records the shared remainders it hears of.
func (l *Leased) exact(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	l.stats.roundTrips.Add(1)
	cs := checks
	for i := range checks {
		c := &checks[i]
		if c.Cost < 0 || !bucket(c.Limit.Algorithm()) || l.opts.modeOf(c.Limit.ID()) != LeaseAuto {
			continue
		}
		shared := c.Limit
		if e := l.entry(c); e != nil {
			shared = e.plan.shared
		} else if p, ok := planLease(c.Limit, l.opts.MaxAge); ok {
			shared = p.shared
		}
		if shared == c.Limit {
			continue
		}
		if &cs[0] == &checks[0] {
			cs = slices.Clone(checks)
		}
		cs[i].Limit = shared
	}
	if err := l.next.Apply(ctx, cs, out); err != nil {
		return err
	}
	now := l.clock()
	for i := range checks {
		c := &checks[i]
		if e := l.entry(c); e != nil {
			e.mu.Lock()
			e.hear(&out[i], now)
			e.mu.Unlock()
			out[i].Remaining = min(out[i].Remaining, c.Limit.Burst())
		} else if e := l.existing(c); e != nil && c.Cost == 0 {
			// A peek changes nothing: what is available at once is the
			// shared remainder and what this instance holds, as a check
			// its lease decides reports.
			e.mu.Lock()
			out[i].Remaining = min(max(out[i].Remaining, 0)+e.held(), c.Limit.Burst())
			e.mu.Unlock()
		}
	}
	return nil
}

// existing returns the entry of c's key and limit if there is one, never
// making it.
func (l *Leased) existing(c *sluice.Check) *leaseEntry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if e := l.entries[leaseKey{c.Key, c.Limit.ID()}]; e != nil && e.limit == c.Limit {
		return e.leased()
	}
	return nil
}

// bucket reports whether a is of the bucket family, whose leased limits
// the shared state decides with a smaller burst.
func bucket(a sluice.Algorithm) bool {
	return a == sluice.AlgorithmTokenBucket || a == sluice.AlgorithmGCRA || a == sluice.AlgorithmLeakyBucket
}
