package envoy

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/sluice-dev/sluice"
)

// refuseLate turns d, the admission of p's checks, into a refusal when a
// leaky-bucket queue's turn (its Delay) starts after ctx's deadline. Envoy
// gives up on the call by then (its rate limit filter's timeout, 20ms by
// default) and, with failure_mode_deny false (its default), lets the
// request through at once, undelayed: such a turn is answered OVER_LIMIT
// at once instead, as httplimit and sluice.Limiter.Wait refuse it. Every
// enforcing check whose Delay passes the deadline is refused, its
// RetryAfter its Delay (a request sent then finds the queue ahead of it
// drained); the others keep their statuses, as checks that fitted a
// refused request do. What the request charged fixed and sliding windows
// is given back (sluice.Limiter.Refund), and their Remaining is then what
// they hold uncharged; a bucket's units, the late queue's slot among them,
// cannot be given back (a bucket keeps no receipt, see sluice.Refunder)
// and stay spent. The rules hold no concurrency limit (LoadRules refuses
// one), so there is no lease to release. A refund that fails leaves the
// charges counted, and is logged. d is left as it is without a deadline,
// or with one that every queue's turn starts by.
//
// Only a check that waits (a Delay above 0) can be late: one without a
// delay keeps its status whatever the deadline, a deadline that passed
// before the decision too, so that settle marks no window over for a
// refusal made for lack of time. A request that the store decided is
// answered so even when its deadline has passed; the context's error
// answers one that the store did not decide (see grpcError).
func (s *Service) refuseLate(ctx context.Context, p *plan, d *sluice.Decision) {
	deadline, ok := ctx.Deadline()
	if !ok || !d.Allowed || d.Delay == 0 {
		return
	}
	left := time.Until(deadline)
	if d.Delay <= left {
		return
	}
	s.refund(ctx, p, d)
	d.Allowed, d.Violated = false, d.Violated[:0]
	for i := range p.checks {
		st, l := &d.Statuses[i], p.checks[i].Limit
		if l.Shadow() || st.Delay == 0 || st.Delay <= left {
			continue
		}
		st.Allowed, st.RetryAfter = false, st.Delay
		d.Violated = append(d.Violated, l.Name())
	}
}

// refund gives back what d, the admission of p's checks, charged (see
// refuseLate), each refunded check's Remaining then counting its cost
// again; on an error it logs, and d says what was charged.
func (s *Service) refund(ctx context.Context, p *plan, d *sluice.Decision) {
	shift := func(sign int64) {
		for i := range d.Statuses {
			if st := &d.Statuses[i]; st.Charged != 0 {
				st.Remaining += sign * p.checks[i].Cost
			}
		}
	}
	shift(1) // Refund clears Charged once it has given back
	if err := s.limiter.Refund(context.WithoutCancel(ctx), p.checks, d); err != nil {
		shift(-1)
		cmp.Or(s.log, slog.Default()).Warn("envoy: a request refused for its deadline is still counted: the refund failed",
			"err", err)
	}
}
