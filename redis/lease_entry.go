package redis

import (
	"context"
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
	gen      uint64 // which of the entry's leases this is
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

	taking bool // a take for it runs
}

// leased returns e if its limit is leased, else nil.
func (e *leaseEntry) leased() *leaseEntry {
	if !e.ok {
		return nil
	}
	return e
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

// want returns the units a take for e asks for at now: 0 (none) while the
// shared remainder is unknown or stale, else e.size capped by maxUnits and
// the remainder's share.
func (e *leaseEntry) want(now, maxUnits, share, stale int64) int64 {
	if e.shared < 0 || now-e.heard > stale {
		return 0
	}
	return max(min(e.size, maxUnits, e.shared/share), 0)
}

// hear records the shared state's answer st, heard at now.
func (e *leaseEntry) hear(st *sluice.Status, now int64) {
	e.shared, e.heard = st.Remaining, now
	e.reset = now + st.ResetAfter.Microseconds()
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

// tryLeases decides checks (entries es) from leases when every check's
// lease covers it; otherwise it starts taking a lease for each check whose
// lease does not (see take) and decides the call exactly, leaving every
// lease as it was: a call is never refused, nor kept waiting, by a take.
func (l *Leased) tryLeases(ctx context.Context, checks []sluice.Check, es []*leaseEntry, out []sluice.Status) error {
	now := l.clock()
	locked := lockAll(es)
	all := true
	for i, e := range es {
		if e.dead || !l.covers(e, checks[i].Cost, now) {
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
		return nil
	}
	for i, e := range es {
		if !e.dead && !l.covers(e, checks[i].Cost, now) {
			if c := &e.cur; c.leased > 0 && c.units < checks[i].Cost && now-c.taken < (c.deadline-c.taken)/2 {
				e.size = min(2*e.size, l.opts.MaxUnits) // spent within half its life
			}
			l.take(e, now, e.want(now, l.opts.MaxUnits, l.share, l.opts.MaxAge.Microseconds()))
		}
	}
	unlockAll(locked)
	return l.exact(ctx, checks, out)
}

// newLease returns a lease of units of e from a take of taken units at
// the shared state's time g, sent at local time now, whose status is st.
// It may be spent until now + its life from g: the take ran no earlier
// than now, so the lease never outlives its window (or L) by the shared
// state's clock.
func (l *Leased) newLease(e *leaseEntry, now, g, units, taken int64, st *sluice.Status) lease {
	e.gen++
	l.stats.leases.Add(1)
	l.stats.leased.Add(units)
	return lease{
		units: units, leased: units, taken: now, gen: e.gen,
		deadline: now + e.plan.lifeAt(g),
		mark:     e.plan.mark(g, taken, st.ResetAfter.Microseconds()),
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
		if e := l.entry(&checks[i]); e != nil {
			e.mu.Lock()
			e.hear(&out[i], now)
			e.mu.Unlock()
			out[i].Remaining = min(out[i].Remaining, checks[i].Limit.Burst())
		}
	}
	return nil
}

// bucket reports whether a is of the bucket family, whose leased limits
// the shared state decides with a smaller burst.
func bucket(a sluice.Algorithm) bool {
	return a == sluice.AlgorithmTokenBucket || a == sluice.AlgorithmGCRA || a == sluice.AlgorithmLeakyBucket
}
