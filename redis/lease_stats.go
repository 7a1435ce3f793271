package redis

import "sync/atomic"

// LeaseStats counts what a Leased did since it was made.
type LeaseStats struct {
	// Calls is the number of Apply calls; Local of them were decided from
	// leases alone, without asking Redis.
	Calls, Local int64
	// RoundTrips is the number of calls to Redis for decisions: takes, and
	// calls decided exactly by the store behind (which may answer from
	// its over-limit cache or its fallback without Redis). Prefetches of
	// them are takes started in the background while the lease before
	// still covered calls (at its low water), which no call waited for.
	// GiveBacks is the number of give-back batches (lease.lua runs, one
	// per Cluster slot of a batch of at most 256 keys).
	RoundTrips, Prefetches, GiveBacks int64
	// Leases is the number of leases taken; Leased the units they held
	// beyond their checks' own cost.
	Leases, Leased int64
	// Spent is the units admitted from leases without a round trip;
	// Returned the units given back to Redis; Expired the units still
	// unspent when their lease ended (given back too, but by then a
	// window may have ended or a bucket refilled them).
	Spent, Returned, Expired int64
	// Failures is the number of takes and give-back runs Redis failed (an
	// error or no answer within the store's timeout, or a take's deadline
	// passed; not those whose caller cancelled them). They reach Redis around the failover, whose counts
	// do not include them; the checks of a failed take are then decided by
	// the failover, as without leases.
	Failures int64
	// Lost is the units of leases that were neither spent nor given
	// back because the shared state that counted them was lost: a master
	// back without its data, or one that took over without its
	// predecessor's last writes (as far as the store saw them: see
	// Losses), a Reset of the key since
	// their take (see Store.Reset), or a state Redis evicted (or that was
	// deleted) since their take.
	Lost int64
	// Held is the units of the leases held now, not yet spent or given
	// back; Keys the keys and limits with a lease held now; Taking the
	// takes running now.
	Held, Keys, Taking int64
}

// MeanLeaseSize returns Leased/Leases, 0 before the first lease.
func (s LeaseStats) MeanLeaseSize() float64 {
	if s.Leases == 0 {
		return 0
	}
	return float64(s.Leased) / float64(s.Leases)
}

// RoundTripsPerDecision returns RoundTrips/Calls, 0 before the first call.
func (s LeaseStats) RoundTripsPerDecision() float64 {
	if s.Calls == 0 {
		return 0
	}
	return float64(s.RoundTrips) / float64(s.Calls)
}

type leaseCounters struct {
	calls, local, roundTrips, prefetches, giveBacks atomic.Int64
	failures                                        atomic.Int64
	taking                                          atomic.Int64
	leases, leased, spent, returned, expired, lost  atomic.Int64
}

// Stats returns the counts so far. It looks at every key's lease, so it
// is meant for a metrics scrape, not for every decision.
func (l *Leased) Stats() LeaseStats {
	var held, keys int64
	l.mu.RLock()
	for _, e := range l.entries {
		e.mu.Lock()
		if h := e.held(); h > 0 {
			held += h
			keys++
		}
		e.mu.Unlock()
	}
	l.mu.RUnlock()
	c := &l.stats
	return LeaseStats{
		Held: held, Keys: keys, Taking: c.taking.Load(),
		Calls: c.calls.Load(), Local: c.local.Load(),
		RoundTrips: c.roundTrips.Load(), Prefetches: c.prefetches.Load(), GiveBacks: c.giveBacks.Load(),
		Failures: c.failures.Load(),
		Leases:   c.leases.Load(), Leased: c.leased.Load(),
		Spent: c.spent.Load(), Returned: c.returned.Load(), Expired: c.expired.Load(), Lost: c.lost.Load(),
	}
}
