package envoy

import (
	"context"
	"slices"

	"github.com/sluice-dev/sluice"
)

// A request may need more checks than one Limiter.Allow call carries
// (sluice.MaxChecks): each of its descriptors is at most one check that
// costs something, but a peek (hits_addend 0) at a fixed window also reads
// the window's over-limit record (see settle.go), and a descriptor of a
// requests_per_unit 0 rule reads its record of hits (see blocked.go). Such
// a request is decided in two calls: first the peeks that do not fit
// beside the checks that cost something, then those checks with the other
// peeks. A peek is always allowed and consumes nothing, so the request is
// admitted or refused, and charged, as by one call; and when either call
// fails the request has spent nothing.

// decide decides p.checks into d, in one Limiter.Allow call when they fit
// in one; otherwise as above, with d's Statuses in the order of p.checks
// and its other fields those of the call that spends. scratch is working
// memory.
func (p *plan) decide(ctx context.Context, l *sluice.Limiter, d, scratch *sluice.Decision) error {
	if len(p.checks) <= sluice.MaxChecks {
		return l.Allow(ctx, p.checks, d)
	}
	p.order = p.order[:0]
	for i := range p.checks {
		if p.checks[i].Cost > 0 {
			p.order = append(p.order, i)
		}
	}
	for i := range p.checks {
		if p.checks[i].Cost == 0 {
			p.order = append(p.order, i)
		}
	}
	p.batch = p.batch[:0]
	for _, i := range p.order {
		p.batch = append(p.batch, p.checks[i])
	}
	first := min(len(p.batch), sluice.MaxChecks)
	*scratch = sluice.Decision{Statuses: scratch.Statuses[:0], Violated: scratch.Violated[:0]}
	if err := l.Allow(ctx, p.batch[first:], scratch); err != nil {
		return err
	}
	if err := l.Allow(ctx, p.batch[:first], d); err != nil {
		return err
	}
	p.merged = slices.Grow(p.merged[:0], len(p.checks))[:len(p.checks)]
	for j, i := range p.order {
		if j < first {
			p.merged[i] = d.Statuses[j]
		} else {
			p.merged[i] = scratch.Statuses[j-first]
		}
	}
	d.Statuses = append(d.Statuses[:0], p.merged...)
	return nil
}
