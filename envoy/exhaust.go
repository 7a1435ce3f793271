package envoy

import (
	"context"

	"github.com/sluice-dev/sluice"
)

// exhaustTries bounds the calls that spend one refused window: each spends
// what the last answer said was left, and is refused, spending nothing, if
// another request took some of it in between.
const exhaustTries = 3

// exhaust spends what is left of every fixed window that d refused (a
// shadow one too), as envoyproxy/ratelimit counts the hits of every
// request, so that once a request is over such a limit the window stays
// over it until it ends: a later, smaller request is refused as it would
// be by envoyproxy/ratelimit. Only the refused checks spend; the others
// of the request spend nothing (the all-or-nothing rule). Each window is
// spent in a call of its own, into scratch; an error leaves the windows as
// they are: the request's answer is already decided.
func (p *plan) exhaust(ctx context.Context, l *sluice.Limiter, d, scratch *sluice.Decision) {
	for _, s := range p.slots {
		if s.check < 0 || !s.aligned {
			continue
		}
		st := d.Statuses[s.check]
		if st.Allowed || st.Remaining == 0 {
			continue
		}
		c := [1]sluice.Check{p.checks[s.check]}
		c[0].Cost = st.Remaining
		for range exhaustTries {
			*scratch = sluice.Decision{Statuses: scratch.Statuses[:0], Violated: scratch.Violated[:0]}
			if l.Allow(ctx, c[:], scratch) != nil {
				break
			}
			if got := scratch.Statuses[0]; got.Allowed || got.Remaining == 0 {
				break
			}
			c[0].Cost = scratch.Statuses[0].Remaining
		}
		d.Statuses[s.check].Remaining = 0 // identical descriptors share the check
	}
}
