package failover

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sluice-dev/sluice"
)

// Probe asks the primary, once, about every node whose breaker lets a probe
// through now (see BreakerOptions.OpenFor) — as the next call on the node
// would, but without one — and returns when every probe has its outcome.
// A breaker moves only when a call or a probe goes through it: without
// them an open breaker stays open, and Stats says so, however long the
// primary has been back. A Store whose calls may stop while its breaker is
// open (an idle instance, or one that refuses requests before they reach
// it) is probed by RunProbes.
//
// A probe is a peek of a check of the call whose failure opened the
// breaker, bounded as a call is (Options.Timeout; under Local with a
// ChargeOnce or a Charge, Options.ChargeTimeout when the primary bounds
// its calls itself), and under Local with a ChargeOnce (or a Charge) it
// first charges what this instance owes on the key and on a few other
// keys of the node, as a call does before the primary decides it. Its
// success closes the breaker and, under Local with a
// Charge, starts the node's return period (see Store); its failure opens
// the breaker again for another OpenFor. A probe decides nothing and
// charges no check of its own: it is counted neither in
// Stats.FallbackDecisions nor in Stats.StoreErrors (a failed probe shows
// in BreakerOpens), and OnFallback is not told of it. A probe counts as
// routed to its node: a node whose probes fail stays in Stats.Nodes, and
// in Stats.Breaker, however long no call has come. A node whose breaker
// has a call's probe out is not probed. A probe whose ctx ends first
// leaves the breaker as it was, with its probe given back.
//
// The primary may have come to place the probe's check on another node
// (Options.Node) since its call was routed: a Sentinel's or Cluster's
// store names the node "" until it connects, a Cluster's slot moves, a
// Sentinel names a new master. The probe still goes, to the node the
// primary places the check on now, and its outcome settles the kept
// node's breaker as it would the breaker of that node: a node whose keys
// are answered again reads closed, and, no longer routed to, leaves
// Stats.Nodes after a while; one whose keys are not stays open.
//
// Probe is safe for concurrent use with the Store's calls. On the zero
// Store it does nothing.
func (f *Store) Probe(ctx context.Context) {
	if f.primary == nil {
		return
	}
	var due []*node
	f.nodes.mu.RLock()
	for _, n := range f.nodes.m {
		if wait, open := n.breaker.dueIn(); open && wait == 0 {
			due = append(due, n)
		}
	}
	f.nodes.mu.RUnlock()
	var wg sync.WaitGroup
	for _, n := range due {
		wg.Go(func() { f.probe(ctx, n) })
	}
	wg.Wait()
}

// RunProbes probes the primary (Probe) whenever a node's breaker lets a
// probe through, until ctx is done, and then returns: run it on a
// goroutine of its own beside a Store whose calls may stop while its
// breaker is open, so that the Store's health (Stats.Breaker and
// Stats.Nodes) follows the primary's with no call, within about OpenFor
// of a change. While every breaker is closed it waits without waking.
// One RunProbes per Store is enough: more probe no more often, since a
// breaker lets one probe through at a time. On the zero Store it only
// waits for ctx.
func (f *Store) RunProbes(ctx context.Context) {
	if f.primary == nil {
		<-ctx.Done()
		return
	}
	t := time.NewTimer(f.openFor)
	t.Stop()
	defer t.Stop()
	for {
		wait, open := f.nextProbe()
		var timer <-chan time.Time
		if open {
			// A probe given back (its check answered from a cache) is
			// due again at once: the floor keeps such a node from
			// spinning.
			t.Reset(min(max(wait, f.openFor/16), f.openFor))
			timer = t.C
		}
		select {
		case <-ctx.Done():
			return
		case <-f.opened:
			t.Stop()
		case <-timer:
			f.Probe(ctx)
		}
	}
}

// nextProbe reports whether the breaker of a node that can be probed (one
// a call failed on) is open or half-open, and how long until the first
// lets a probe through.
func (f *Store) nextProbe() (wait time.Duration, open bool) {
	f.nodes.mu.RLock()
	ns := make([]*node, 0, len(f.nodes.m))
	for _, n := range f.nodes.m {
		if n.breaker.State() != BreakerClosed {
			ns = append(ns, n)
		}
	}
	f.nodes.mu.RUnlock()
	for _, n := range ns {
		if n.probe.Load() == nil {
			continue
		}
		if w, o := n.breaker.dueIn(); o && (!open || w < wait) {
			wait, open = w, true
		}
	}
	return wait, open
}

// probe sends one probe to the primary about n (see Probe), if a call
// failed on n and n's breaker lets it through.
func (f *Store) probe(ctx context.Context, n *node) {
	c := n.probe.Load()
	if c == nil {
		return
	}
	tk, ok := n.breaker.Allow()
	if !ok {
		return
	}
	if BreakerState(tk.word&3) != BreakerHalfOpen {
		n.breaker.abandon(tk) // closed by a call meanwhile: nothing to probe
		return
	}
	n.touch(f.elapsed())
	peek := []sluice.Check{*c}
	recovering := f.charge != nil && f.ledger != nil
	var err error
	cached := false
	if recovering {
		cctx, cancel := f.chargeBounded(ctx)
		err = f.settleOr(cctx, peek, []*node{n}, true)
		cancel()
	} else {
		cctx, cancel := f.bounded(ctx)
		out := make([]sluice.Status, 1)
		if f.cache != nil {
			cached, err = f.cache.ApplyCached(cctx, peek, out)
		} else {
			err = f.primary.Apply(cctx, peek, out)
		}
		cancel()
	}
	switch {
	case err == nil && !cached:
		if recovering {
			n.fellBack.Store(false)
			n.returnUntil.Store(f.elapsed() + int64(f.returnFor))
		}
		n.breaker.Done(tk, true)
	case err == nil, ctx.Err() != nil,
		errors.Is(err, sluice.ErrInvalidCheck), errors.Is(err, sluice.ErrInvalidLimit):
		n.breaker.abandon(tk) // nothing learnt of the primary
	default:
		n.breaker.Done(tk, false)
	}
}

// failed feeds the failure of a call of checks on n to n's breaker, whose
// ticket for the call is t. One of the call's checks on n is kept, as a
// peek, for probing it (see Probe): on n's first failure, before the
// breaker hears of it, so that a breaker is never open without one, and
// again whenever the failure opens the breaker, so that probes ask of a
// key the node served last.
func (f *Store) failed(n *node, t ticket, checks []sluice.Check) {
	first := n.probe.Load() == nil
	if first {
		f.keepProbe(n, checks)
	}
	n.breaker.Done(t, false)
	if !first && n.breaker.State() == BreakerOpen {
		f.keepProbe(n, checks)
	}
}

// keepProbe keeps the first of checks on n as n's probe (see failed). The
// primary may have come to place every check of the call on another node
// while the call was under way (see Probe); then it keeps the call's first
// check, which a probe asks of where the primary places it now.
func (f *Store) keepProbe(n *node, checks []sluice.Check) {
	if len(checks) == 0 {
		return
	}
	c := &checks[0]
	for i := range checks {
		if f.nodeOf == nil || f.nodes.lookup(f.nodeOf(&checks[i])) == n {
			c = &checks[i]
			break
		}
	}
	n.probe.Store(&sluice.Check{Key: c.Key, Limit: c.Limit})
}
