package httplimit

import (
	"context"
	"net/http"
	"slices"

	"github.com/sluice-dev/sluice"
)

// A Pending is what the limits of an admitted request that count by its
// answer (Options.Count) need to be settled once the answer is known, kept
// apart from the request's Result: a decision API answers before the
// request is served, and its caller reports the answer afterwards. Keep
// makes one; Settle settles it. It holds copies of the checks (with their
// limits as they were charged, whatever a reload changes since) and their
// receipts, a few hundred bytes; it is safe to keep past the Result and to
// settle from another goroutine than the one that decided.
type Pending struct {
	m        *Middleware
	checks   []sluice.Check
	decision sluice.Decision
	subject  string
}

// Keep returns the Pending of res's charges on the limits that count by
// the answer, or nil when res has none (not admitted, exempt, no such limit,
// or nothing charged). res stays the caller's, to Discard or Done as ever.
func (m *Middleware) Keep(res *Result) *Pending {
	if !m.countsByResponse(res) {
		return nil
	}
	p := &Pending{m: m, subject: res.Identity.Subject, decision: sluice.Decision{Allowed: true}}
	for i := range res.Checks {
		if st := res.Decision.Statuses[i]; m.counts[res.Checks[i].Limit.Name()] != "" && st.Charged != 0 {
			p.checks = append(p.checks, res.Checks[i])
			p.decision.Statuses = append(p.decision.Statuses, st)
		}
	}
	p.checks, p.decision.Statuses = slices.Clip(p.checks), slices.Clip(p.decision.Statuses)
	return p
}

// Settle settles p by the answer to its request, as DoneWithResponse
// settles a Result: status (0 for no answer) and the answer's header h (nil
// if unknown: the limits that count a header then keep their whole cost).
// A Pending is settled once: settling it again gives back nothing.
func (p *Pending) Settle(ctx context.Context, status int, h http.Header) {
	p.m.settle(ctx, p.checks, &p.decision, status, h, p.subject)
	for i := range p.decision.Statuses {
		p.decision.Statuses[i].Charged = 0
	}
}
