package client

import (
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// Every policy a host's answers have stated is remembered on its own, as
// well as through the bounds (see hostState), which each answer's policies
// set together. A policy p that answer j stated admits anything while
//
//	sent ≤ done_j + cost_j + min(Ĉ, r_j,p + ⌊ρ_p·(now − a_j)⌋)
//
// for the reason every ceiling_j holds, until p's reset after j, when its
// quota is whole again. A send goes only when every remembered policy
// admits it, which the bounds alone do not ensure in two cases:
//
//   - a probe after the binding policy's reset: another policy with less
//     left than the probe costs would refuse it, so the probe waits until
//     every policy can take its cost, its reset at the latest;
//   - an answer that omits a policy an earlier one stated: the draft says
//     such a policy is no closer to exhaustion, which is true of the
//     server's count when it answered, not of the requests sent since;
//     what is sent still counts against the remembered policy until its
//     reset, so that a server omitting its binding policy cannot make the
//     client overshoot it. The bound of an answer that omits a policy
//     says nothing of it, however high it is: every send is asked of
//     every remembered policy.
//
// A 429 starts afresh (a new epoch): the policies it states replace those
// remembered. Concurrency policies are left to the bounds, as their slots
// come back as requests end rather than with time.

// remembered is what the host knows of one policy: the bound of one
// policy alone (base + min(Ĉ, rem + its refills)), and its reset.
type remembered struct {
	name    string
	b       bound     // the highest bound of the policy proven (n is 1)
	resetAt time.Time // when its quota is whole again, as the latest answer says
}

// admits reports whether the policy lets sent units have been sent at
// now, for a quota of capacity at least capacity, or else when it will
// (its reset at the latest). norate ignores its rate.
func (p *remembered) admits(sent int64, now time.Time, capacity int64, norate bool) (ok bool, wake time.Time) {
	b := p.b
	if norate {
		b.rate[0] = 0
	}
	if !now.Before(p.resetAt) || sent <= b.value(now, capacity, 0) {
		return true, time.Time{}
	}
	if at := b.reaches(sent, now, capacity, 0); !at.IsZero() && at.Before(p.resetAt) {
		return false, at
	}
	return false, p.resetAt
}

// policiesAdmit reports whether every remembered policy lets sent units
// have been sent at now, or else when they may (the latest of the
// policies' waits). h.mu is held.
func (h *hostState) policiesAdmit(sent int64, now time.Time) (ok bool, wake time.Time) {
	ok = true
	for i := range h.policies {
		if pok, at := h.policies[i].admits(sent, now, h.capacity, h.norate); !pok {
			ok, wake = false, later(wake, at)
		}
	}
	return ok, wake
}

// policiesGrow reports whether a remembered policy is assumed to come
// back at a rate. h.mu is held.
func (h *hostState) policiesGrow() bool {
	for i := range h.policies {
		if h.policies[i].b.grows() {
			return true
		}
	}
	return false
}

// remember records the policies that r, the answer to tk, states; a
// refusal (fresh) replaces those remembered. When the server said how
// long to wait (toldWait: a refusal's Retry-After, which takes precedence
// over the fields' resets), no policy holds past h.probeAt, the end of
// that wait. h.mu is held.
func (h *hostState) remember(tk ticket, r response, fresh, toldWait bool) {
	if fresh {
		h.policies = h.policies[:0]
	}
	base := algo.AddSat(algo.AddSat(tk.doneAtSend, tk.forgiven), tk.cost)
	qs := r.quotas
	if len(qs) == 0 {
		qs = []quota{{RateLimit: r.rl}}
	}
	for _, q := range qs {
		if q.inFlight {
			continue
		}
		reset := min(q.Reset, maxServerWait)
		if reset == 0 {
			reset = defaultReset
		}
		p := remembered{name: q.Policy, b: bound{base: base, at: r.at, n: 1}, resetAt: r.at.Add(reset)}
		p.b.rem[0] = q.Remaining
		if toldWait && p.resetAt.After(h.probeAt) {
			p.resetAt = h.probeAt
		}
		if !h.norate {
			p.b.rate[0] = max(q.rate, h.observed[q.Policy])
		}
		h.rememberPolicy(p)
	}
}

// rememberPolicy merges p into what is remembered of its policy: the
// higher bound, and the latest reset. Past maxPolicies, a policy not yet
// remembered is not. h.mu is held.
func (h *hostState) rememberPolicy(p remembered) {
	for i := range h.policies {
		k := &h.policies[i]
		if k.name != p.name {
			continue
		}
		// Keep the higher bound at the newer one's arrival: a rate's
		// refills may lift an older, lower one above it.
		if p.b.value(p.b.at, h.capacity, 0) >= k.b.value(p.b.at, h.capacity, 0) {
			k.b = p.b
		}
		k.resetAt = later(k.resetAt, p.resetAt)
		return
	}
	if len(h.policies) < maxPolicies {
		h.policies = append(h.policies, p)
	}
}
