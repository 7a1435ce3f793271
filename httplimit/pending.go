package httplimit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"

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
//
// A request's charges are settled at most once: by the first of
// Pending.Settle and DoneWithStatus, DoneWithResponse or DoneUnserved on
// the Result it was kept from, whichever comes first, the others giving
// back nothing.
type Pending struct {
	m        *Middleware
	checks   []sluice.Check
	decision sluice.Decision
	subject  string
	plan     string
	settled  atomic.Bool
}

// Keep returns the Pending of res's charges on the limits that count by
// the answer, or nil when res has none (not admitted, exempt, no such limit,
// or nothing charged). res stays the caller's, to Discard or Done as ever;
// the settlement of its charges is the Pending's from then on: keeping res
// again returns the same Pending, and DoneWithStatus, DoneWithResponse or
// DoneUnserved on res settles it (a later Settle then gives back nothing).
// A Result once discarded (by Discard, Done or the like) must not be kept:
// before any later request, keeping it returns nil.
func (m *Middleware) Keep(res *Result) *Pending {
	if res == nil || res.pooled || !m.countsByResponse(res) {
		return nil
	}
	if res.kept != nil {
		return res.kept
	}
	p := &Pending{m: m, subject: res.Identity.Subject, decision: sluice.Decision{Allowed: true}}
	if res.Identity.Plan != nil {
		p.plan = res.Identity.Plan.Name
	}
	for i := range res.Checks {
		if st := res.Decision.Statuses[i]; m.counts[res.Checks[i].Limit.Name()] != "" && st.Charged != 0 {
			p.checks = append(p.checks, res.Checks[i])
			p.decision.Statuses = append(p.decision.Statuses, st)
		}
	}
	p.checks, p.decision.Statuses = slices.Clip(p.checks), slices.Clip(p.decision.Statuses)
	res.kept = p
	return p
}

// Settle settles p by the answer to its request, as DoneWithResponse
// settles a Result: status (0 for no answer) and the answer's header h (nil
// if unknown: the limits that count a header then keep their whole cost);
// a gRPC answer is judged by the grpc-status of h (see DoneWithResponse).
//
// It returns the store's error, wrapped, when the refund the answer calls
// for fails (errors.Is finds sluice.ErrStoreUnavailable in an unreachable
// store's): the request then stays counted, all of it but what the store
// gave back before failing (a store may refund some checks and fail
// others). What such a refund did is not known (a timeout may follow the
// store's work), so p is settled all the same and is never tried again: a
// charge is given back at most once, at worst never.
//
// A Pending is settled once: settling it again, from any goroutine, or
// after its Result was settled by DoneWithStatus, DoneWithResponse or
// DoneUnserved, gives back nothing and returns nil — "settled already" is
// not an error, and only the settlement that ran reports its failure. A
// nil Pending (Keep's when there is nothing to settle) and the zero
// Pending settle nothing and return nil.
func (p *Pending) Settle(ctx context.Context, status int, h http.Header) error {
	if err := p.settle(ctx, answerStatus(status, h), h, true); err != nil {
		return fmt.Errorf("httplimit: settle: %w", err)
	}
	return nil
}

// settle is Settle for status judged already (see answerStatus), without
// wrapping the store's error; a request not served (served false) used
// nothing of the limits that count a header (see Middleware.settle).
func (p *Pending) settle(ctx context.Context, status int, h http.Header, served bool) error {
	if p == nil || p.m == nil || !p.settled.CompareAndSwap(false, true) {
		return nil
	}
	_, err := p.m.settle(ctx, p.checks, &p.decision, status, h, served)
	return err
}

// pendingWire is a Pending as MarshalBinary writes it.
type pendingWire struct {
	Subject string      `json:"s"`
	Plan    string      `json:"p,omitempty"`
	Checks  []wireCheck `json:"c"`
}

// wireCheck is one charged check of a pendingWire: its store key, its
// limit's name, its cost and its receipt (sluice.Status.Charged).
type wireCheck struct {
	Key     string `json:"k"`
	Limit   string `json:"l"`
	Cost    int64  `json:"n"`
	Charged int64  `json:"r"`
	// Counted names what of the limit the charge was counted in (see
	// countedAs): a limit of the same name that counts elsewhere is not
	// the one charged.
	Counted string `json:"x"`
}

// MarshalBinary encodes p for UnmarshalPending: its subject and plan, and
// for each charged check its store key, its limit's name, its cost and its
// receipt — not the limits themselves, which UnmarshalPending looks up by
// name. It fails only for a nil p. The encoding names the client's store keys:
// whoever carries it should not be able to change it (sign it). Each
// Pending UnmarshalPending returns from it settles once on its own, whether
// p was settled or not: whoever keeps the encoding must settle it once.
func (p *Pending) MarshalBinary() ([]byte, error) {
	if p == nil {
		return nil, errors.New("httplimit: a nil Pending has no settlement to encode")
	}
	w := pendingWire{Subject: p.subject, Plan: p.plan, Checks: make([]wireCheck, len(p.checks))}
	for i := range p.checks {
		c := &p.checks[i]
		w.Checks[i] = wireCheck{Key: c.Key, Limit: c.Limit.Name(), Cost: c.Cost, Charged: p.decision.Statuses[i].Charged,
			Counted: countedAs(&c.Limit)}
	}
	return json.Marshal(&w)
}

// UnmarshalPending returns the Pending b encodes (see
// Pending.MarshalBinary), settled through m: m may be the Middleware of
// another instance with the same limits, whose limits it looks up by the
// names they were charged under, among those of the plan it names, of the
// rules and the global ones that count by the answer. It fails on a
// malformed b, or on a limit m does not have or does not count by the
// answer (a configuration changed since the charge): the charges then
// stand.
func (m *Middleware) UnmarshalPending(b []byte) (*Pending, error) {
	var w pendingWire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("httplimit: a pending settlement: %w", err)
	}
	if len(w.Checks) == 0 || len(w.Checks) > sluice.MaxChecks {
		return nil, fmt.Errorf("httplimit: a pending settlement of %d checks", len(w.Checks))
	}
	p := &Pending{m: m, subject: w.Subject, plan: w.Plan, decision: sluice.Decision{Allowed: true},
		checks: make([]sluice.Check, len(w.Checks))}
	p.decision.Statuses = make([]sluice.Status, len(w.Checks))
	for i, c := range w.Checks {
		l, ok := m.countedLimit(w.Plan, c.Limit, c.Counted)
		if !ok {
			return nil, fmt.Errorf("httplimit: a pending settlement: limit %q is not counted by the answer here", c.Limit)
		}
		if c.Key == "" || c.Cost < 0 || c.Charged == 0 {
			return nil, fmt.Errorf("httplimit: a pending settlement: check %d is not a charge", i)
		}
		p.checks[i] = sluice.Check{Key: c.Key, Limit: l, Cost: c.Cost}
		p.decision.Statuses[i] = sluice.Status{Allowed: true, Charged: c.Charged}
	}
	return p, nil
}

// countedLimit returns the limit named name, counted as counted says (see
// countedAs), that counts by the answer among the limits of the plan named
// plan, the rules' and the global ones.
func (m *Middleware) countedLimit(plan, name, counted string) (sluice.Limit, bool) {
	if m.counts[name] == "" {
		return sluice.Limit{}, false
	}
	var lists [][]sluice.Limit
	for p := range m.plans { // the policy's plans and listed keys' own
		if p.Name == plan {
			lists = append(lists, p.Limits)
		}
	}
	for _, ru := range m.rules {
		lists = append(lists, ru.limits)
	}
	lists = append(lists, m.policy.Global)
	for _, list := range lists {
		for _, l := range list {
			if l.Name() == name && countedAs(&l) == counted {
				return l, true
			}
		}
	}
	return sluice.Limit{}, false
}

// countedAs names the state and the windows l counts its charges in — its
// ID, algorithm, window and calendar — which a refund needs as charged:
// what degradation scales (the quantity) is left out.
func countedAs(l *sluice.Limit) string {
	return fmt.Sprintf("%s/%v/%d/%v/%d", l.ID(), l.Algorithm(), l.Window(), l.Period(), l.Offset())
}
