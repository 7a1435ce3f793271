package client

import (
	"net/http"
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// response is what a finished attempt tells the host.
type response struct {
	arrived bool // a response came back (false: the attempt failed)
	// cached: a cache served the response from storage (see fromCache),
	// so it never reached the server, or perhaps its limiter (an Answer's
	// Aside): it says nothing of the quota now.
	cached bool
	at     time.Time
	status int
	// rl is the binding policy (see readResponse): the one whose reset
	// the probe waits for, whose refills are proven, and whose remaining
	// bounds the capacity; a concurrency policy only when r states no
	// other.
	rl     RateLimit
	hasRL  bool
	quotas []quota // every policy, when the response was parsed for them
	ra     time.Duration
	hasRA  bool
	// backoff, when hasBackoff, is the wait the client draws for itself
	// before retrying a refusal that gives none (a Transport's backoff):
	// such a refusal holds the host that long, and defaultReset without it.
	backoff    time.Duration
	hasBackoff bool
	// bytes holds the policies of content bytes (quotas and rl the
	// others'); ofBytes makes them the response a body state reads.
	bytes []quota
	// alone holds the policies RateLimit-Policy states and RateLimit does
	// not (see window), bytesAlone those of content bytes (ofBytes makes
	// them a body state's alone).
	alone, bytesAlone []statedPolicy
}

// finish records the end of tk's attempt.
func (h *hostState) finish(tk ticket, r response) {
	h.mu.Lock()
	defer h.mu.Unlock()
	defer h.broadcast()
	if h.body != nil && tk.body != nil {
		defer h.body.finish(*tk.body, r.ofBytes())
	}
	h.state(r)
	if h.learn {
		if r.arrived {
			h.keepWindows(r)
		}
		// The server counted the units, if it did, by now: they leave the
		// windows w from now (those written off again, as they may have
		// been counted since).
		h.countAnswered(tk.cost, r.at)
		if r.arrived && r.status < 400 {
			h.countAdmitted(tk.cost, tk.sentAt)
		}
	}
	// An attempt written off (writeOff) is counted as failed already, in
	// lost: its answer, if it comes, still teaches, but moves no count.
	writtenOff := tk.gen != h.gen
	h.quietSince = r.at
	if !writtenOff {
		h.inflight -= tk.cost
		if tk.probe {
			h.probing = false
		}
	}
	if r.arrived && r.hasRL {
		defer func() {
			h.last = answered{ok: true, policy: r.rl.Policy, rem: r.rl.Remaining, sent: h.sent, sentAt: tk.sentAt,
				doneAtSend: tk.doneAtSend, cost: tk.cost, at: r.at}
			if !h.anchor.ok || h.anchor.policy != h.last.policy || r.at.Sub(h.anchor.at) > anchorAge {
				h.anchor = h.last
			}
		}()
	}
	var units int64
	var maybeReset bool
	if r.arrived && r.status < 400 && r.hasRL {
		units, _, maybeReset = h.refill(tk, tk.last, r)
		if h.learn && !h.norate {
			h.observe(r.rl.Policy, h.refillRate(tk, tk.last, r))
			h.observe(r.rl.Policy, h.refillRate(tk, tk.anchor, r))
		}
	}
	if tk.speculative && !writtenOff {
		h.speculating = false
		switch {
		case r.status == http.StatusTooManyRequests:
			h.dropRates()
		case units > 0 && !maybeReset && !h.mayBeWindow(r.rl.Policy, tk, r.at):
			h.trust(r.rl.Policy)
		}
	}
	if !r.arrived {
		// Perhaps counted, perhaps not: it stays in sent, not in done, and
		// the next probe settles it.
		if !writtenOff {
			h.lost = algo.AddSat(h.lost, tk.cost)
		}
		return
	}
	if !writtenOff {
		h.done = algo.AddSat(h.done, tk.cost)
		if r.status < 400 {
			h.admitted = algo.AddSat(h.admitted, tk.cost)
		}
	}
	if throttled(r.status) && r.hasRA {
		h.holdUntil = later(h.holdUntil, r.at.Add(min(r.ra, maxServerWait)))
	}
	if !h.learn {
		return
	}
	if r.status < 400 && r.hasRL {
		h.capacity = max(h.capacity, algo.AddSat(r.rl.Remaining, tk.cost))
	}
	if r.status == http.StatusTooManyRequests && h.stated && !r.hasRL && h.mode != modeKnown {
		return // a refusal for quotas other than those this state counts
	}
	if r.status == http.StatusTooManyRequests {
		h.refused(tk, r)
		return
	}
	if !r.hasRL {
		// No quota binds, as far as the server says: on a fresh host's
		// first answer, and on the answer of a probe sent alone after the
		// quota's reset (a server may send the fields only when a quota is
		// close to exhaustion). A host whose bounds are of concurrency
		// quotas alone sends no probe (their slots come back as requests
		// end, not at a reset): there, an admitted answer to a request sent
		// after the last answer with fields arrived says so as well (the
		// server no longer states them). Other answers without them may
		// come from before the quota was spent: they change nothing. Nor
		// does one a cache served, which never reached the server, but on
		// a fresh host, which has no bound to lose (kept to one request at
		// a time until the server answered, a host whose answers a cache
		// serves would be kept so for good).
		current := !writtenOff && !r.cached && r.status < 400 && tk.epoch == h.epoch
		probed := current && tk.probe
		dropped := current && h.mode == modeKnown && !tk.sentAt.Before(h.last.at) &&
			h.now.slotsOnly() && h.eventual.slotsOnly()
		if h.mode == modeFresh || probed || dropped {
			h.mode = modeOpen
		}
		return
	}
	if h.mode == modeKnown && tk.epoch != h.epoch {
		return // sent before a 429 proved the old bound wrong
	}
	// A 503's Retry-After takes precedence over every reset, as a 429's
	// does: the probe comes when it ends, and no policy the answer states
	// holds past it (see remember).
	told := throttled(r.status) && r.hasRA
	reset := min(r.rl.Reset, maxServerWait)
	switch {
	case told:
		reset = min(r.ra, maxServerWait)
		h.probeAt = r.at.Add(reset)
	case reset == 0:
		reset = defaultReset
	}
	h.remember(tk, r, false, told)
	if r.status < 400 {
		h.forgetUnreported(tk, r)
	}
	b := h.boundOf(tk, r)
	if h.mode != modeKnown {
		h.mode, h.now, h.eventual, h.probeAt = modeKnown, b, b, r.at.Add(reset)
		return
	}
	// Every answer's reset is when the quota is whole again if nothing
	// else is counted after it; the probe waits for the last of them (what
	// is still in flight, the probe's own condition covers).
	if !told {
		h.probeAt = later(h.probeAt, r.at.Add(reset))
	}
	if b.value(r.at, h.capacity, h.ended) >= h.now.value(r.at, h.capacity, h.ended) {
		h.now = b
	}
	if b.top(h.capacity, h.ended) >= h.eventual.top(h.capacity, h.ended) {
		h.eventual = b
	}
}

// refused records the learning of r, a 429 answering tk: the bound was
// wrong, so the host trusts nothing sent so far and waits until the server
// says the quota is back (its Retry-After, or the reset of a quota spent
// for tk), or when it says neither, for the client's own backoff
// (r.backoff), defaultReset without one. A refusal for a concurrency
// quota (see slotsRefused) holds the probe, past that wait, until a slot
// that the host's own requests held is back. h.mu is held.
func (h *hostState) refused(tk ticket, r response) {
	h.unrelease(tk)
	wait, told := serverWait(r.ra, r.hasRA, r.rl, r.hasRL, tk.cost)
	switch {
	case told:
	case r.hasBackoff:
		wait = r.backoff
	default:
		wait = defaultReset
	}
	if h.mode == modeKnown && tk.epoch != h.epoch {
		h.probeAt = later(h.probeAt, r.at.Add(wait))
		return
	}
	if h.mode == modeKnown && (h.now.grows() || h.eventual.grows() || h.policiesGrow()) {
		h.distrustRates()
	}
	h.mode = modeKnown
	h.epoch++
	h.now = bound{base: h.sent, n: 1}
	h.slotsRefused(tk, r, &h.now)
	h.eventual = h.now
	h.probeAt = r.at.Add(wait)
	if r.hasRL {
		h.remember(tk, r, true, r.hasRA)
	}
}

// slotsRefused adds to b, the bound after r, a 429 answering tk, the
// slots that the host's own requests held when r arrived, when r states a
// concurrency policy with too little left for tk: those answered and not
// ended (nor lost or cut short, whose slots may be free), tk aside, as a
// refused request holds none. Such a policy has its slots back as they
// end, not with a reset: until the probe has been answered, the host
// sends no request but the probe into them, and one for each slot of its
// own that ends (or a unit's cost, when it held fewer), so that requests
// are not sent while bodies still stream. Unless the host's own requests
// leave fewer than tk's cost of the policy's stated slots, the refusal
// may have counted the requests of other clients as well, whose ends the
// host cannot see: the probe goes after the wait, whatever its own
// requests hold (see bound.refusal); otherwise it goes once one of them
// has ended, or failed (see slotsMayFit). The requests in flight when r
// arrived, which may be refused as well, are not counted as held, nor
// their ends as slots back. h.mu is held.
func (h *hostState) slotsRefused(tk ticket, r response, b *bound) {
	lost := h.unsure()
	held := h.sent - h.ended - lost - h.inflight - tk.cost
	spent, full := false, false
	for _, q := range r.quotas {
		if q.inFlight && q.Remaining < tk.cost {
			spent = true
			full = full || q.Limit > 0 && algo.AddSat(held, tk.cost) > q.Limit
		}
	}
	if !spent || held <= 0 || b.n == len(b.rem) {
		return
	}
	// The bound rises (value) once the units ended beyond tk's and those
	// in flight come to tk's cost less rem: once one held has ended, or
	// all have when they hold fewer units than tk's cost. tk's end, its
	// body read or closed, is counted first.
	b.rem[b.n], b.inFlight[b.n] = max(tk.cost-held, 0), true
	b.n++
	b.ended = algo.AddSat(algo.AddSat(h.ended, tk.cost), h.inflight)
	b.forgiven = lost
	b.refusal = !full
}

// end records that tk's request has ended, its answer read whole or its
// upgraded connection closed (after finish, which recorded the answer's
// arrival): a concurrency quota's slot it held is back. A request whose
// answer is never read to its end (or connection never closed) never
// ends: its slot is thought held for good. An attempt that failed never
// ends either: its units are lost, and their slots thought held until a
// probe learns the quota anew (see slotsMayFit); nor does one cut short
// (see cutShort).
func (h *hostState) end(tk ticket) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ended = algo.AddSat(h.ended, tk.cost)
	if h.body != nil && tk.body != nil {
		h.body.end(*tk.body)
	}
	h.broadcast()
}

// cutShort records that tk's answer was closed before its end (after finish,
// which recorded its arrival). The server may still be serving the
// request, and hold its concurrency slot until it has done, however soon
// the client hangs up; or it may have done already. Its units are held as
// a failed attempt's are: their slots are for a probe to learn of, after
// the quota's reset (see slotsMayFit).
func (h *hostState) cutShort(tk ticket) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cut = algo.AddSat(h.cut, tk.cost)
	if h.body != nil && tk.body != nil {
		h.body.cutShort(*tk.body)
	}
	h.broadcast()
}

// boundOf is the bound that r, the response to tk, proves.
func (h *hostState) boundOf(tk ticket, r response) bound {
	b := bound{base: algo.AddSat(algo.AddSat(tk.doneAtSend, tk.forgiven), tk.cost), ended: algo.AddSat(tk.doneAtSend, -tk.cutForgiven),
		forgiven: algo.AddSat(tk.forgiven, tk.cutForgiven), at: r.at}
	add := func(q quota) {
		if b.n == len(b.rem) {
			return // more policies than a bound keeps: the rest say less than r.rl's
		}
		b.rem[b.n], b.inFlight[b.n], b.name[b.n] = q.Remaining, q.inFlight, q.Policy
		if !h.norate && !q.inFlight && !q.resetBeyondWindow() {
			b.rate[b.n] = max(q.rate, h.observed[q.Policy])
		}
		b.n++
	}
	if len(r.quotas) == 0 {
		add(quota{RateLimit: r.rl})
		return b
	}
	for _, q := range r.quotas {
		add(q)
	}
	if b.n == len(b.rem) {
		b.rem[0], b.rate[0], b.inFlight[0] = min(b.rem[0], r.rl.Remaining), 0, false // never above the binding policy's
	}
	return b
}
