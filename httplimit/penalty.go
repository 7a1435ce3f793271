package httplimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/logsample"
)

// Penalty puts a client that keeps being refused in a penalty box (a
// mitigation timeout): after Refusals refusals within Within (refusals by
// the global limits alone, a full service's, by rules whose key held
// nothing of the client's — only what every client shares, or the one
// value FallbackShared gives requests without theirs — by concurrency
// limits alone, whose Retry-After is a poll interval, and for want of room
// in the store, sluice.Status.NoRoom, are not counted), every
// request of the client is refused for For, whatever its quota, with the
// problem type ProblemPenalty and a Retry-After of the time left. The box
// is kept in the store under the client's key, beside its limits, so every
// instance on a shared store sees it. The zero Penalty puts no one in a
// box.
//
// A client in the box spends nothing: the box is decided in the store call
// of the request's own limits, all or nothing, so that a request of a
// client not in the box costs no more store calls than without a box, and
// a boxed client's refusal spends none of its limits. Counting refusals and
// boxing cost a store call each, on the refusal path only. Once the store
// has said a client is boxed (by boxing it, to Penalize, or to one of its
// requests), the middleware refuses its requests from that answer, without
// a store call, until just before the end it stated and for a second at
// most, then asks again: a client let out early through another instance
// (an operator's reset there) is refused here at most a second longer, as
// overlimit.Cache bounds a remembered refusal. SubjectLimits, which finds
// the states to reset, forgets the client's box at once. The middleware
// remembers up to 65,536 boxed clients; past that, a newly boxed one is
// refused by the store per request.
//
// The box holds one state per client, named "penalty": a GCRA state whose
// theoretical arrival time is when the box lifts. Boxing spends a bucket of
// one refilled every For (a GCRA limit of 1 per For): it moves that time
// For ahead, unless it is ahead already (the client is in the box). Every
// request's call checks, on the same state, the box's guard: a GCRA limit
// of 2^39 units per microsecond, burst 2^38+1, at cost 1 (0 in a peek),
// which is refused while the box holds, a whole microsecond or more, with
// RetryAfter the exact time left, and which moves the time by 2^-39 µs when
// admitted, a fraction the bucket of one per For never sees. The guard
// takes one of the call's sluice.MaxChecks checks, and shows in no header,
// body or observation of an admitted request: its Checks and Decision are
// those of the request's limits alone.
//
// A store that leases quota (Options.StoreLeases) decides a call from the
// instance's leases only when it holds no check the store does not lease,
// and the guard is never leased. With StoreLeases, once a call's guard
// has found a client not in the box, the client's requests are sent
// without the guard for a second from when that call was sent, then with
// it again: a client not in the box costs the store one guarded call per
// second at most, beside the takes of its leases. A box set through
// another instance meanwhile refuses the client here within a second of
// being set (the store decided that call after it was sent); until then
// this instance decides its requests as if it were not boxed, from its
// leases or, when they fall short, by its limits on the store, so it
// admits it no more than its limits allow. Peeks always carry the guard.
// The middleware remembers up to 65,536 clients not in the box; past
// that, a newly seen one's calls carry the guard.
type Penalty struct {
	// Refusals within Within put a client in the box: at least 1, at most
	// sluice.MaxQuantity.
	Refusals int64
	// Within is the sliding window the refusals are counted in: whole
	// microseconds, from 1µs to sluice.MaxWindow.
	Within time.Duration
	// For is how long the box holds the client: whole microseconds, from
	// 1µs to sluice.MaxWindow.
	For time.Duration
	// Uncounted, with a box configured, checks the box with every request
	// but counts none of the Middleware's refusals toward it: for a
	// Middleware that shares another's box (the same store and client
	// keys) whose refusals are not its clients' own doing, such as one of
	// the limits a server reduces while it is degraded.
	Uncounted bool
}

// ProblemPenalty is the problem type of a refusal by the penalty box.
const ProblemPenalty = "https://github.com/sluice-dev/sluice/blob/main/docs/rules.md#penalty-box"

// Names of the penalty box's state; no limit may have them.
const (
	penaltyName    = "penalty"
	penaltyRefusal = "penalty-refusals"
)

// Parameters of the box's guard (see Penalty): a rate of guardRate units
// per µs, so that the 1 unit of an admitted request moves the box's time
// by 2^-39 µs, and a burst that admits while that time is less than half
// a microsecond ahead. The box's own writes move it by whole microseconds:
// the guard refuses from 1µs ahead, and its RetryAfter is the time left,
// exact. A client's own requests would have to pass 2^38 more than
// guardRate per µs to be refused by it.
const (
	guardRate  = 1 << 39
	guardBurst = 1<<38 + 1
)

// penaltyBox is a compiled Penalty: the refusals counted as a sliding log
// of Refusals per Within; the box, a GCRA state, spent by boxing as a
// bucket of 1 refilled every For and checked with every request by the
// guard; and the boxes the store has told of.
type penaltyBox struct {
	p        Penalty
	refusals sluice.Limit
	box      sluice.Limit
	guard    sluice.Limit
	held     boxMemory
	// leased is Options.StoreLeases: clear then holds the clients whose
	// calls go without the guard.
	leased bool
	clear  clearMemory
	// boxedLines bounds the "client boxed" lines (boxedLinesPerSecond).
	boxedLines logsample.Budget
}

// boxedLinesPerSecond bounds the "penalty box: client boxed" lines a
// Middleware writes in a second of the wall clock, as the server bounds
// its refusal lines (log.refusals_per_second, 10 by default): a flood of
// refusals from many addresses boxes each of them, and cannot flood the
// log. The next line written counts those left out ("left_out").
const boxedLinesPerSecond = 10

func newPenaltyBox(p Penalty, leased bool) *penaltyBox {
	if p.Refusals == 0 {
		return nil
	}
	return &penaltyBox{p: p, leased: leased, refusals: sluice.SlidingLog(p.Refusals, p.Within).Named(penaltyRefusal),
		box:   sluice.GCRA(1, p.For).Named(penaltyName),
		guard: sluice.GCRA(guardRate, time.Microsecond).WithBurst(guardBurst).Named(penaltyName)}
}

// boxedHere reports whether m remembers res's client to be in the box
// (see boxMemory), and then makes res a refusal by the box without a
// store call; known is whether m remembers a box of the client at all,
// live or not.
func (m *Middleware) boxedHere(res *Result) (boxed, known bool) {
	now := m.timeNow()
	left, live, known := m.penalty.held.lookup(res.Identity.storeKey(m.id.prefix), now)
	if !live {
		return false, known
	}
	start := time.Now()
	m.penalize(res, left)
	res.Now = now
	if m.observe != nil && !res.peeking {
		m.observe(res, time.Since(start), nil)
	}
	return true, true
}

// unguarded reports whether the call of res's request, sent at res.Now,
// goes without the guard: with Options.StoreLeases, for a request that is
// no peek of a client the store said was not in the box in a call sent
// less than boxMaxAge before, and of whom no box is remembered (boxKnown).
func (pb *penaltyBox) unguarded(key string, res *Result, boxKnown bool) bool {
	return pb.leased && !res.peeking && !boxKnown && pb.clear.cleared(key, res.Now)
}

// remember records that the store, asked at sent and answering at
// answered, said key's box holds for left more.
func (pb *penaltyBox) remember(key string, sent, answered time.Time, left time.Duration) {
	if pb.leased {
		pb.clear.forget(key)
	}
	pb.held.remember(key, sent, answered, left)
}

// guarded returns checks, the checks of res's request, with the box's
// guard on key appended: at cost 1, or 0 when res is a peek, which spends
// nothing and still tells a boxed client (its guard has nothing left).
func (pb *penaltyBox) guarded(checks []sluice.Check, key string, res *Result) []sluice.Check {
	cost := int64(1)
	if res.peeking {
		cost = 0
	}
	return append(checks, sluice.Check{Key: key, Limit: pb.guard, Cost: cost})
}

// unguard takes the guard, check n of res, out of res's checks and
// decision, which are then those of the request's limits alone, as
// without a box, its deciding limit among them (see sluice.Decision).
// When the guard found the client boxed, it makes res a refusal by the
// box, and remembers the box (the call was sent at res.Now); when the
// guard was not evaluated (Undecided), nothing; otherwise it forgets the
// box known (see boxedHere) and, with Options.StoreLeases, remembers the
// client not boxed (see penaltyBox.unguarded).
func (m *Middleware) unguard(res *Result, n int, key string, known bool) {
	d := &res.Decision
	g := d.Statuses[n]
	res.Checks, d.Statuses = res.Checks[:n], d.Statuses[:n]
	if !g.Allowed && (g.Unavailable || g.NoRoom) {
		// The store did not decide the guard (a failover's deny), or had
		// no room to keep its state: the box says nothing of the client,
		// and the call, refused for it, was refused for what the store
		// could not do, nothing counted.
		for i := range d.Statuses {
			if st := &d.Statuses[i]; st.Allowed {
				st.Allowed, st.Unavailable, st.NoRoom, st.RetryAfter = false, g.Unavailable, g.NoRoom, g.RetryAfter
			}
		}
		refusingLimit(res.Checks, d)
		return
	}
	if g.Undecided {
		// Not evaluated (an over-limit cache refused the call by another
		// check): the box says nothing of the client, neither boxed nor
		// cleared, and the call stays refused as it was.
		return
	}
	if !g.Allowed || res.peeking && g.Remaining == 0 {
		m.penalty.remember(key, res.Now, m.timeNow(), g.ResetAfter)
		m.penalize(res, g.ResetAfter)
		return
	}
	if known {
		m.penalty.held.forget(key)
	}
	if m.penalty.leased {
		m.penalty.clear.remember(key, res.Now)
	}
	if d.Allowed && d.Limit.ID() == penaltyName {
		decidingLimit(res.Checks, d)
	}
}

// decidingLimit makes d, an admitted decision of checks, state the limit
// the decision of checks alone states (see sluice.Decision.Limit): the
// enforcing limit with the least Remaining, of equals the one with the
// longest ResetAfter, the first of those; the first limit when all are
// shadow limits.
func decidingLimit(checks []sluice.Check, d *sluice.Decision) {
	best := -1
	for i := range checks {
		if checks[i].Limit.Shadow() {
			continue
		}
		st := &d.Statuses[i]
		if best < 0 || st.Remaining < d.Statuses[best].Remaining ||
			st.Remaining == d.Statuses[best].Remaining && st.ResetAfter > d.Statuses[best].ResetAfter {
			best = i
		}
	}
	best = max(best, 0)
	st := &d.Statuses[best]
	d.Limit, d.Remaining, d.ResetAfter, d.RetryAfter = checks[best].Limit, st.Remaining, st.ResetAfter, 0
}

// refusingLimit makes d, a refused decision of checks, state what the
// decision of checks alone states (see sluice.Decision): every enforcing
// limit that refused in Violated, and the one of them with the longest
// RetryAfter, the first of those, as its Limit.
func refusingLimit(checks []sluice.Check, d *sluice.Decision) {
	d.Violated = d.Violated[:0]
	best := -1
	for i := range checks {
		st := &d.Statuses[i]
		if checks[i].Limit.Shadow() || st.Allowed {
			continue
		}
		d.Violated = append(d.Violated, checks[i].Limit.Name())
		if best < 0 || st.RetryAfter > d.Statuses[best].RetryAfter {
			best = i
		}
	}
	if best < 0 {
		return // only shadow limits refused: d stays as the store left it
	}
	st := &d.Statuses[best]
	d.Limit, d.Remaining, d.ResetAfter, d.RetryAfter = checks[best].Limit, st.Remaining, st.ResetAfter, st.RetryAfter
}

// penalize makes res a refusal by the box, which holds its client for
// left more.
func (m *Middleware) penalize(res *Result, left time.Duration) {
	pb, d := m.penalty, &res.penaltyDecision
	retry := max(left, time.Microsecond)
	d.Statuses = append(d.Statuses[:0], sluice.Status{ResetAfter: left, RetryAfter: retry})
	d.Allowed, d.Limit, d.Remaining, d.ResetAfter, d.RetryAfter, d.Delay = false, pb.box, 0, left, retry, 0
	d.Violated = append(d.Violated[:0], penaltyName)
	res.penaltyChecks[0] = sluice.Check{Key: res.Identity.storeKey(m.id.prefix), Limit: pb.box}
	res.Checks = append(res.Checks[:0], res.penaltyChecks[0])
	res.checksOf = nil
	res.Decision, res.penaltyDecision = res.penaltyDecision, res.Decision
	res.Penalized = true
}

// countRefusal counts a refusal of res's client and boxes it at the
// Refusals-th within Within, logging the boxing unless the client was in
// the box already. Only a refusal of the client's own doing counts (see
// clientsRefusal), never one the store did not decide (a failover's deny).
// A count or a box the store has no room to keep (sluice.Status.NoRoom)
// is not written: the client is not boxed for it. A failure is logged:
// the refusal stands.
func (m *Middleware) countRefusal(ctx context.Context, res *Result) {
	if storeRefused(res) || !m.clientsRefusal(res) {
		return
	}
	pb := m.penalty
	key := res.Identity.storeKey(m.id.prefix)
	res.penaltyChecks[0] = sluice.Check{Key: key, Limit: pb.refusals, Cost: 1}
	d := &res.penaltyDecision
	if err := m.limiter.Allow(ctx, res.penaltyChecks[:], d); err != nil {
		m.warn(ctx, "penalty box: refusal not counted", "err", err)
		return
	}
	if d.Allowed && d.Statuses[0].Remaining > 0 || d.Statuses[0].Unavailable || d.Statuses[0].NoRoom {
		return // not the last refusal, or not counted: the store did not decide, or had no room
	}
	res.penaltyChecks[0] = sluice.Check{Key: key, Limit: pb.box, Cost: 1}
	sent := m.timeNow()
	if err := m.limiter.Allow(ctx, res.penaltyChecks[:], d); err != nil {
		m.warn(ctx, "penalty box: client not boxed", "err", err)
		return
	}
	st := d.Statuses[0]
	if st.Unavailable || st.NoRoom {
		return // the store did not decide, or had no room: the client is not boxed
	}
	if st.Remaining == 0 {
		pb.remember(key, sent, m.timeNow(), st.ResetAfter)
	}
	if d.Allowed { // else the client was in the box already
		pb.boxedLines.Info(ctx, m.logger(), boxedLinesPerSecond, "penalty box: client boxed", "subject", res.Identity.Subject, "for", pb.p.For)
	}
}

// ErrNoPenalty is returned by Penalize when the middleware has no Penalty.
var ErrNoPenalty = errors.New("httplimit: no penalty box is configured (Options.Penalty, penalty: in the configuration)")

// Penalize puts the client of subject (an Identity subject, as
// SubjectLimits takes it) in the penalty box now, whatever its refusals,
// as an operator blocks an abusive client: its requests are refused for
// Penalty.For, or until its "penalty" state is reset. It returns how long
// the box holds the client: Penalty.For, or the time left when it was in
// the box already. When no store decided the box (a failover's deny or
// allow while its store cannot be reached), or the store had no room to
// keep it (sluice.Status.NoRoom), nothing was written: the client is not
// boxed, and the error wraps sluice.ErrStoreUnavailable.
func (m *Middleware) Penalize(ctx context.Context, subject string) (time.Duration, error) {
	if m.penalty == nil {
		return 0, ErrNoPenalty
	}
	if subject == GlobalSubject || strings.HasPrefix(subject, "rule:") {
		return 0, fmt.Errorf("httplimit: %q is not a client: only clients go in the penalty box", subject)
	}
	key, err := m.subjectKey(subject)
	if err != nil {
		return 0, err
	}
	var d sluice.Decision
	sent := m.timeNow()
	if err := m.limiter.Allow(ctx, []sluice.Check{{Key: key, Limit: m.penalty.box, Cost: 1}}, &d); err != nil {
		return 0, err
	}
	st := d.Statuses[0]
	if st.Unavailable {
		return 0, fmt.Errorf("httplimit: %q not put in the penalty box: the store could not decide, and nothing was written: %w", subject, sluice.ErrStoreUnavailable)
	}
	if st.NoRoom {
		return 0, fmt.Errorf("httplimit: %q not put in the penalty box: the store had no room for its state, and nothing was written (room may be found in %v): %w",
			subject, st.RetryAfter, sluice.ErrStoreUnavailable)
	}
	m.penalty.remember(key, sent, m.timeNow(), st.ResetAfter)
	return st.ResetAfter, nil
}

// penaltyProblem is the refusal of a client in the box.
func (m *Middleware) penaltyProblem(r *http.Request, res *Result) *Problem {
	pb := m.penalty
	ra := retryAfterSeconds(res.Decision.RetryAfter)
	return &Problem{Type: ProblemPenalty, Title: "Too Many Requests", Status: http.StatusTooManyRequests,
		Detail: fmt.Sprintf("In the penalty box: every request is refused for %s after %d refused requests within %s (or an operator's decision); retry in %d s.",
			FormatWindow(pb.p.For), pb.p.Refusals, FormatWindow(pb.p.Within), ra),
		Instance: r.URL.EscapedPath(), ViolatedPolicies: res.Decision.Violated, RetryAfter: &ra, Policy: penaltyName,
		Plan: res.Identity.Plan.Name, Documentation: m.docsURL}
}

// penalty checks Options.Penalty.
func (v *validator) penalty(o *Options) {
	p := o.Penalty
	if p == (Penalty{}) {
		return
	}
	if p.Refusals < 1 || p.Refusals > sluice.MaxQuantity {
		v.errorf("Penalty.Refusals", "%d is out of range [1, %d]", p.Refusals, int64(sluice.MaxQuantity))
	}
	for _, d := range []struct {
		field string
		d     time.Duration
	}{{"Penalty.Within", p.Within}, {"Penalty.For", p.For}} {
		if d.d < time.Microsecond || d.d > sluice.MaxWindow || d.d%time.Microsecond != 0 {
			v.errorf(d.field, "%v is not a duration in [1µs, %v]", d.d, sluice.MaxWindow)
		}
	}
	names := map[string]bool{}
	for _, l := range o.Global {
		names[l.ID()] = true
	}
	plans := slices.Clone(o.Plans)
	for _, k := range o.Keys {
		plans = append(plans, k.Plan) // a key's own plan, beside the client's box too
	}
	for _, pl := range plans {
		if pl != nil {
			for _, l := range pl.Limits {
				names[l.ID()] = true
			}
		}
	}
	for _, r := range o.Rules {
		for _, l := range r.Limits {
			names[ruleLimit(r.Name, l).ID()] = true
		}
	}
	for _, n := range []string{penaltyName, penaltyRefusal} {
		if names[n] {
			v.errorf("Penalty", "a limit is named %q, the name of the penalty box's state", n)
		}
	}
	seen := map[*Plan]bool{}
	for _, pl := range plans {
		if pl == nil || seen[pl] {
			continue
		}
		seen[pl] = true
		n := len(pl.Limits) + len(o.Global)
		for i := range o.Rules {
			if o.Rules[i].AppliesTo(pl.Name) {
				n += len(o.Rules[i].Limits)
			}
		}
		if n == sluice.MaxChecks { // more are refused as too many without a box
			v.errorf("Penalty", "plan %s: %d limits with the global ones and those of every rule that may apply to it, at most %d with a penalty box, whose guard is checked with them",
				pl.Name, n, sluice.MaxChecks-1)
		}
	}
}

// clientsRefusal reports whether res was refused by a limit that counts
// the client's own requests: a plan's, or a rule's whose key, as res's
// request was keyed, has a value of the client's: an attribute other than
// those every client shares (host, route, rule, path, a path wildcard), not
// replaced by the value FallbackShared gives every request without one nor
// by the one every request whose value upstreams read differently shares
// (see ambiguousValue). A refusal by the global limits or such shared keys
// alone is not the client's doing: others spent that quota. Nor is a
// refusal by concurrency limits alone: its Retry-After of a second is a
// poll interval (a slot frees when a request ends), and a client polling
// as told while its own requests run is not misbehaving. Nor is a
// refusal for want of room (sluice.Status.NoRoom): the store, full of
// other clients' states, could not keep the client's, which counted
// nothing.
func (m *Middleware) clientsRefusal(res *Result) bool {
	for _, name := range res.Decision.Violated {
		if res.concurrencyNamed(name) || res.noRoomNamed(name) {
			continue
		}
		switch ru := res.ruleNamed(name); {
		case ru != nil:
			if j := slices.Index(res.matched, ru); j < 0 || res.sharedMask&(1<<j) == 0 {
				return true
			}
		case !m.isGlobal(name):
			return true
		}
	}
	return false
}

// concurrencyNamed reports whether the limit of res's checks named name
// is a concurrency limit.
func (res *Result) concurrencyNamed(name string) bool {
	for _, c := range res.Checks {
		if c.Limit.Name() == name {
			return c.Limit.Algorithm() == sluice.AlgorithmConcurrency
		}
	}
	return false
}

// noRoomNamed reports whether the check of res's limit named name was
// refused for want of room (sluice.Status.NoRoom).
func (res *Result) noRoomNamed(name string) bool {
	for i, c := range res.Checks {
		if c.Limit.Name() == name {
			return i < len(res.Decision.Statuses) && res.Decision.Statuses[i].NoRoom
		}
	}
	return false
}

// isGlobal reports whether name is a global limit's.
func (m *Middleware) isGlobal(name string) bool {
	for _, g := range m.policy.Global {
		if g.Name() == name {
			return true
		}
	}
	return false
}
