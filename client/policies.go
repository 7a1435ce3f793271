package client

import (
	"slices"
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// Every policy a host's answers have stated is remembered on its own, as
// well as through the bounds (see hostState), which each answer's policies
// set together. What the client knows of a policy p is what answers said
// of it, and what it sent since:
//
//   - its report: answer j said that r_j,p remained, and p admits
//     anything while
//
//     sent ≤ done_j + cost_j + min(Ĉ, r_j,p + ⌊ρ_p·(now − a_j)⌋)
//
//     for the reason every ceiling_j holds. Refills are counted only
//     while the policy's rate is trusted, or for a speculative send, and
//     only of a policy the last answer named: of one that answers omit,
//     nothing says how it comes back but its q and w.
//   - its reset (t): more of its quota is made available then, not
//     necessarily all of it (a sliding window gives back each unit w after
//     it was counted). After it one send may go alone, to learn the new
//     state, unless the sends since the report went past it (the window
//     admitting them) and may have taken what the reset made available.
//     When the policy's w is not stated, nothing says how much the reset
//     made available, nor when the rest comes back: past it, and until
//     an answer reports the policy again, one send goes at a time, after
//     the last is answered. The policies of the formats that name none
//     (draft 7, draft 6, legacy) are told apart by their limit (see
//     unnamedPolicy): a server reporting the one nearest exhaustion
//     reports them in turn, and one that it stops reporting past its
//     reset is forgotten (see forgetUnreported).
//   - its window, when an answer has stated its q and w: at most q units
//     in any span of w of the client's own sends (see window). A window
//     that has counted for w has seen every unit the server may still
//     count, so it admits on its own what it can; of a policy no answer
//     has said the remaining of, it is all the client knows, from the
//     start. Once an answer proves that the policy releases its whole
//     count at its reset (see release), the window counts past each
//     reset only the units answered after the report of it.
//
// A send goes only when every remembered policy admits it, which the
// bounds alone do not ensure: a probe after the binding policy's reset
// would otherwise go while another policy has less left than it costs, and
// an answer that omits a policy (the draft says such a policy is no closer
// to exhaustion, which is true of the server's count when it answered, not
// of the requests sent since) would set a bound that says nothing of it.
//
// A 429 starts afresh (a new epoch): the reports of the policies it states
// replace those remembered; the others, and every window, are kept.
// Concurrency policies are left to the bounds, as their slots come back
// as requests end rather than with time.

// remembered is what the host knows of one policy.
type remembered struct {
	name string
	// reported: an answer said what remained of it: b is the highest
	// bound of the policy alone that answers proved (base + min(Ĉ, rem +
	// its refills); n is 1), resetAt when more of it is made available, as
	// the latest answer says, probed whether a send since that reset may
	// have spent what it made available, and beyond whether that reset
	// lies beyond the policy's window, which then admits nothing before it
	// (see quota.resetBeyondWindow).
	reported bool
	b        bound
	resetAt  time.Time
	probed   bool
	beyond   bool
	// named: the host's last answer with rate-limit fields named it.
	named bool
	// unreported counts, of a policy of the formats that name none, the
	// units admitted since its reset by answers that reported another
	// limit and not it (see forgetUnreported).
	unreported int64
	// win counts what was sent under it, once an answer stated its q and
	// w; nil until then.
	win *window
	// releases: an answer proved that the policy releases its whole count
	// at its reset (see release); released is then the reset of the
	// latest report, and before the units its window had counted when
	// that report came.
	releases bool
	released time.Time
	before   int64
	// aloneAt (nanoseconds since the Unix epoch) is when the first send
	// since its latest reset went with nothing else in flight, aloneWith
	// the host's admitted units then (see markAlone).
	aloneAt, aloneWith int64
	// unreleased: a 429 met by a send after such a reset says the proof
	// was wrong (a bucket whose reset is when its next unit comes back):
	// the policy is not released again.
	unreleased bool
}

// Why a remembered policy admits a send (see admits).
const (
	heldByPolicy = iota
	byReport     // within what an answer said remained
	byWindow     // within q of the client's own sends in any span of w
	byReset      // a policy nothing binds yet: no report, no window
	byProbe      // alone, after the reset
)

// admits says why the policy lets a send of cost units go at now, sent
// units having been sent with it and inFlight (not counting it) being
// unanswered, or else until when it must wait (the zero time: until the
// state changes), for a quota of capacity at least capacity. known: the
// host's quota is known (modeKnown); otherwise only the window counts.
// rated: the report's rate may be assumed.
func (p *remembered) admits(sent, cost, inFlight int64, now time.Time, capacity int64, known, rated bool) (why int, wake time.Time) {
	if !p.reported || !known {
		if p.win == nil {
			return byReset, time.Time{}
		}
		if ok, at := p.win.admits(cost, inFlight, now); !ok {
			return heldByPolicy, at
		}
		return byWindow, time.Time{}
	}
	b := p.b
	if !rated || !p.named {
		b.rate[0] = 0
	}
	if sent <= b.value(now, capacity, 0) {
		return byReport, time.Time{}
	}
	wake = b.reaches(sent, now, capacity, 0)
	if p.win == nil {
		// How much the reset made available, and when the rest comes back,
		// nothing says: one send at a time, until an answer reports it again.
		switch {
		case now.Before(p.resetAt):
			return heldByPolicy, earlier(wake, p.resetAt)
		case inFlight == 0:
			return byProbe, time.Time{}
		}
		return heldByPolicy, wake
	}
	// The reset makes more available, perhaps a unit: a send alone may
	// take it, unless the report has been overdrawn (by sends the window
	// admitted), which may have taken it already.
	switch {
	case p.probed || sent-cost > p.b.proven(capacity, 0):
	case now.Before(p.resetAt):
		wake = earlier(wake, p.resetAt)
	case inFlight == 0:
		return byProbe, time.Time{}
	}
	if p.releases && !now.Before(p.released) {
		// Counted afresh since the reset: only the units answered after the
		// report (or in flight) may count still, or fewer if the window
		// has let some go.
		if since := p.win.total - p.before; algo.AddSat(algo.AddSat(since, max(inFlight, 0)), min(cost, p.win.q)) <= p.win.q {
			return byWindow, time.Time{}
		}
		if ok, at := p.win.admits(cost, inFlight, now); !ok {
			return heldByPolicy, earlier(wake, at)
		}
		return byWindow, time.Time{}
	}
	full := p.win.since.Add(p.win.w)
	if p.beyond {
		full = later(full, p.resetAt)
	}
	if now.Before(full) {
		return heldByPolicy, earlier(wake, full)
	}
	if ok, at := p.win.admits(cost, inFlight, now); !ok {
		return heldByPolicy, earlier(wake, at)
	}
	return byWindow, time.Time{}
}

// policiesAdmit reports whether every remembered policy lets a send of
// cost units go at now, as how (see admits) would send it, or else when
// they may (the latest of the policies' waits). h.mu is held.
func (h *hostState) policiesAdmit(cost int64, how int, now time.Time) (ok bool, wake time.Time) {
	ok = true
	known := h.mode == modeKnown
	for i := range h.policies {
		p := &h.policies[i]
		why, at := p.admits(algo.AddSat(h.sent, cost), cost, h.inflight, now, h.capacity, known, h.rated(p.name, how))
		if why == heldByPolicy {
			ok, wake = false, later(wake, at)
		}
	}
	return ok, wake
}

// rated reports whether a send as how may rely on policy's rate: when it
// is trusted, or on the send that tries the rates.
func (h *hostState) rated(policy string, how int) bool {
	return !h.norate && (h.trusts(policy) || how == sendSpeculative)
}

// spendPolicies records, before a send of cost units at now is counted,
// the policies whose reset it may spend: a send after the reset that the
// report does not admit without a rate may take what the reset made
// available, however it was admitted. h.mu is held.
func (h *hostState) spendPolicies(cost int64, now time.Time) {
	if h.mode != modeKnown || cost == 0 {
		return
	}
	for i := range h.policies {
		p := &h.policies[i]
		if !p.reported || p.probed || now.Before(p.resetAt) {
			continue
		}
		if why, _ := p.admits(algo.AddSat(h.sent, cost), cost, h.inflight, now, h.capacity, true, false); why != byReport {
			p.probed = true
		}
	}
}

// countAnswered records in every window that cost units were answered (or
// their attempt failed, or was written off) at at. h.mu is held.
func (h *hostState) countAnswered(cost int64, at time.Time) {
	h.answered.add(cost, at)
	for i := range h.policies {
		if w := h.policies[i].win; w != nil {
			w.add(cost, at)
		}
	}
}

// countAdmitted records in every window that cost units sent at sentAt
// were admitted. h.mu is held.
func (h *hostState) countAdmitted(cost int64, sentAt time.Time) {
	for i := range h.policies {
		if w := h.policies[i].win; w != nil {
			w.addAdmitted(cost, sentAt)
		}
	}
}

// mayBeWindow reports whether a window of policy's q per w, whose q and w
// an answer stated, may have admitted tk, answered at at: its units
// coming back one by one as the older leave it, a sliding window can
// prove a refill as a bucket does, unless it was full of the client's
// units when it admitted tk (see window.full). h.mu is held.
func (h *hostState) mayBeWindow(policy string, tk ticket, at time.Time) bool {
	for i := range h.policies {
		if p := &h.policies[i]; p.name == policy && p.win != nil {
			return !p.win.full(tk.cost, tk.sentAt, at)
		}
	}
	return false
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

// keepWindows gives every policy whose q and w r states, in RateLimit-Policy
// with or without its RateLimit item, a window that counts from r on (one
// of another w than before counts afresh), and counts from the start the
// units answered less than w before r (see history). h.mu is held.
func (h *hostState) keepWindows(r response) {
	for _, q := range r.quotas {
		if !q.inFlight && q.Limit > 0 && q.window > 0 {
			h.keepWindow(statedPolicy{name: q.Policy, q: q.Limit, w: q.window, bytes: q.bytes}, r.at)
		}
	}
	for _, p := range r.alone {
		h.keepWindow(p, r.at)
	}
}

func (h *hostState) keepWindow(s statedPolicy, at time.Time) {
	p := h.policy(s.name)
	switch {
	case p == nil:
	case p.win == nil || p.win.w != s.w:
		p.win = newWindow(s, at)
		h.answered.seed(p.win, at)
	default:
		p.win.q = s.q
	}
}

// policy returns what is remembered of the policy named name, remembering
// it from now on, or nil when maxPolicies others are. h.mu is held.
func (h *hostState) policy(name string) *remembered {
	for i := range h.policies {
		if h.policies[i].name == name {
			return &h.policies[i]
		}
	}
	if len(h.policies) == maxPolicies {
		return nil
	}
	h.policies = append(h.policies, remembered{name: name})
	return &h.policies[len(h.policies)-1]
}

// remember records the reports of the policies that r, the answer to tk,
// states; those of a refusal (fresh) replace what was reported of them
// rather than adding to it. When the server said how long to wait
// (toldWait: the Retry-After of a 429 or 503, which takes precedence over
// every reset), no policy it states holds past h.probeAt, the end of that
// wait, whatever reset an earlier answer reported of it. h.mu is held.
func (h *hostState) remember(tk ticket, r response, fresh, toldWait bool) {
	for i := range h.policies {
		h.policies[i].named = false
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
		k := h.policy(q.Policy)
		if k == nil {
			continue
		}
		reset := min(q.Reset, maxServerWait)
		if reset == 0 {
			reset = defaultReset
		}
		b := bound{base: base, at: r.at, n: 1}
		b.rem[0], b.name[0] = q.Remaining, q.Policy
		if !h.norate && !q.resetBeyondWindow() {
			b.rate[0] = max(q.rate, h.observed[q.Policy])
		}
		resetAt := r.at.Add(reset)
		if toldWait && resetAt.After(h.probeAt) {
			resetAt = h.probeAt
		}
		k.named, k.unreported = true, 0
		beyond := q.resetBeyondWindow()
		switch {
		case fresh || !k.reported:
			k.reported, k.b, k.resetAt, k.probed, k.beyond = true, b, resetAt, false, beyond
		default:
			// Keep the higher bound at the newer one's arrival: a rate's
			// refills may lift an older, lower one above it.
			if b.value(b.at, h.capacity, 0) >= k.b.value(b.at, h.capacity, 0) {
				k.b = b
			}
			if resetAt.After(k.resetAt) || toldWait && k.resetAt.After(resetAt) {
				k.resetAt, k.probed, k.beyond = resetAt, false, beyond
			}
		}
		if r.status < 400 && !toldWait && k.resetAt.Equal(resetAt) {
			h.release(k, tk, q.Remaining, resetAt)
		}
	}
}

// release records, of the policy k whose window counts its units, what
// the admitted answer to tk says of its reset: rem units remained, and
// more comes back at resetAt.
//
// A sliding log's reset is when its oldest unit leaves it, w after it was
// counted: before resetAt − w. So it held more units than the client's it
// had certainly counted after resetAt − w: those admitted and answered
// before tk was sent and sent after a moment after resetAt − w when none
// was in flight (the host's first send, or, when tk too went alone, the
// first send alone since the policy's previous reset), and tk's. If it
// held no more (q − rem of them), the policy is no sliding log: its count is released whole at its reset,
// as a fixed window's is (and a bucket's, whose reset is when it is
// full). From each reset of such a policy on, its window counts only the
// units answered after the report of that reset (all of them counted
// later than those it reported, perhaps after the reset), and neither
// the units that the server counted before the host's first send nor
// those it reported hold a request. h.mu is held.
func (h *hostState) release(k *remembered, tk ticket, rem int64, resetAt time.Time) {
	if k.win == nil || k.beyond || k.unreleased {
		return
	}
	from := resetAt.Add(-k.win.w)
	var certain int64
	switch {
	case h.began.After(from):
		certain = algo.AddSat(tk.admittedAtSend, tk.cost)
	case tk.alone && k.aloneAt > from.UnixNano() && k.aloneAt <= tk.sentAt.UnixNano():
		certain = algo.AddSat(tk.admittedAtSend-k.aloneWith, tk.cost)
	}
	if certain > 0 && k.win.q-rem <= certain {
		k.releases = true
	}
	if k.releases {
		k.released, k.before = resetAt, k.win.total
	}
}

// markAlone notes a send at now with nothing else in flight, in every
// policy whose window counts its units and whose reset has passed since it
// last noted one (see release). h.mu is held.
func (h *hostState) markAlone(now time.Time) {
	t := now.UnixNano()
	for i := range h.policies {
		p := &h.policies[i]
		if p.win == nil || now.Before(p.resetAt) {
			continue
		}
		if p.resetAt.IsZero() && p.aloneAt == 0 || !p.resetAt.IsZero() && p.aloneAt <= p.resetAt.UnixNano() {
			p.aloneAt, p.aloneWith = t, h.admitted
		}
	}
}

// unrelease stops releasing, for good, every policy released before tk
// was sent, tk having met a 429: the count was not released whole at
// the reset after all. h.mu is held.
func (h *hostState) unrelease(tk ticket) {
	for i := range h.policies {
		if p := &h.policies[i]; p.releases && !tk.sentAt.Before(p.released) {
			p.releases, p.unreleased = false, true
		}
	}
}

// forgetUnreported forgets the policies of the formats that name none
// (see unnamedPolicy) that the server no longer reports: a server that
// changes a policy's limit (sluice's degradation halves them) is seen to
// report a new policy beside the old, which would otherwise hold the host
// to one send at a time past its reset for good. r, the admitted answer to
// tk, reports such policies; every other one whose reset had passed when
// tk was sent counts tk's units, and one that has counted more than its
// limit since it was last reported is forgotten. Had the server still
// counted it, that many units admitted after its reset would have spent
// it in any one of its windows they fell in, and a server that reports
// one policy an answer reports the one nearest exhaustion: it would have
// been reported. Should it be enforced still, the 429 it meets reports it
// again. h.mu is held.
func (h *hostState) forgetUnreported(tk ticket, r response) {
	unnamed := false
	for _, q := range r.quotas {
		_, ok := unnamedLimit(q.Policy)
		unnamed = unnamed || ok
	}
	if !unnamed {
		return
	}
	kept := h.policies[:0]
	for _, p := range h.policies {
		limit, ok := unnamedLimit(p.name)
		if ok && !p.named && p.reported && !tk.sentAt.Before(p.resetAt) {
			if p.unreported = algo.AddSat(p.unreported, tk.cost); p.unreported > limit {
				h.trusted = slices.DeleteFunc(h.trusted, func(name string) bool { return name == p.name })
				delete(h.observed, p.name)
				continue
			}
		}
		kept = append(kept, p)
	}
	clear(h.policies[len(kept):])
	h.policies = kept
}
