package client

import (
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// Every policy a host's answers have stated is remembered on its own, as
// well as through the bounds (see hostState), which each answer's policies
// set together. A policy p that answer j stated admits anything while
//
//	sent ≤ most_p = done_j + cost_j + r_j,p (+ its refills)
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
//     client overshoot it.
//
// A 429 starts afresh (a new epoch): the policies it states replace those
// remembered. Concurrency policies are left to the bounds, as their slots
// come back as requests end rather than with time.

// remembered is what the host knows of one policy.
type remembered struct {
	name    string
	most    int64     // the highest most_p proven
	rate    float64   // units per second its quota comes back at; 0: at its reset
	at      time.Time // when the answer that proved most arrived
	resetAt time.Time // when its quota is whole again, as the latest answer says
	// omitted: the latest answer to state policies did not state this one.
	omitted bool
}

// admits reports whether the policy lets sent units have been sent at
// now, or else when it will (the zero time: never by time alone before
// its reset, which is then the answer). norate ignores its rate.
func (p *remembered) admits(sent int64, now time.Time, norate bool) (ok bool, wake time.Time) {
	if !now.Before(p.resetAt) || sent <= p.most {
		return true, time.Time{}
	}
	if p.rate > 0 && !norate {
		el := max(now.Sub(p.at).Seconds(), 0)
		if sent <= algo.AddSat(p.most, refill(p.rate, el)) {
			return true, time.Time{}
		}
		b := bound{base: p.most, at: p.at, n: 1}
		b.rate[0] = p.rate
		if at := b.reaches(sent, now, 0, 0); !at.IsZero() && at.Before(p.resetAt) {
			return false, at
		}
	}
	return false, p.resetAt
}

// policiesAdmit reports whether every remembered policy lets sent units
// have been sent at now, or else when they may (the latest of the
// policies' waits). Unless probe, only the policies the latest answer
// omitted are asked: the bounds hold the others. h.mu is held.
func (h *hostState) policiesAdmit(sent int64, now time.Time, probe bool) (ok bool, wake time.Time) {
	ok = true
	for i := range h.policies {
		if !probe && !h.policies[i].omitted {
			continue
		}
		if pok, at := h.policies[i].admits(sent, now, h.norate); !pok {
			ok, wake = false, later(wake, at)
		}
	}
	return ok, wake
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
	for i := range h.policies {
		h.policies[i].omitted = true
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
		p := remembered{name: q.Policy, most: algo.AddSat(base, q.Remaining), at: r.at, resetAt: r.at.Add(reset)}
		if toldWait && p.resetAt.After(h.probeAt) {
			p.resetAt = h.probeAt
		}
		if !h.norate {
			p.rate = max(q.rate, h.observed[q.Policy])
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
		if p.most >= k.most {
			k.most, k.at, k.rate = p.most, p.at, p.rate
		}
		k.resetAt, k.omitted = later(k.resetAt, p.resetAt), false
		return
	}
	if len(h.policies) < maxPolicies {
		h.policies = append(h.policies, p)
	}
}
