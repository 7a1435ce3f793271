package client

import (
	"slices"
	"sync"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
)

// What a Transport knows about one host's quota.
//
// The RateLimit headers say how many units remained right after the server
// decided a request (r_j), but with requests in flight the client does not
// know which of its other requests the server had counted by then. It can
// still bound what it may send safely. Count units: sent is every unit sent
// to the host, done every unit whose response has arrived, and a request j
// remembers done_j, the value of done when j was sent. A request the server
// counted after deciding j is one that was not answered before j left, so
// at most (sent − cost_j − done_j) units were counted after j; refills and
// resets only add to the quota. Hence the server will accept anything while
//
//	sent ≤ ceiling_j = done_j + r_j + cost_j
//
// Every ceiling_j is such a lower bound, however late or out of order its
// response arrives, so the host keeps their maximum: the tightest bound it
// has proven. New requests go out while they fit under it. When they no
// longer fit, they wait for responses (which may raise it) or for the
// quota's reset, after which one probe request goes out alone to learn the
// new state. A host starts with one such probe, so that not even the first
// burst of a batch meets a spent quota blindly.
//
// When the headers also say how fast the quota comes back (RateLimit-Policy's
// q units per w seconds), the host assumes that the quota is a bucket
// refilled at ρ = q/w with a capacity C of at least the most it has seen
// available at once (Ĉ). Whole-second windows often understate a fast
// bucket's rate (5/s for 20 a second with a burst of 5, stated q=5;w=1), so
// ρ is also the fastest refill the answers prove: an answer that shows g
// more units left than the previous one allows without a refill (and less
// than a reset would leave) proves that more than g − 1 units came back
// (remaining is rounded down) within the span from the previous request's
// send to this answer's arrival. The server's level then cannot be lower at time
// now than min(C, r_j + ρ·(now − a_j)) minus what was counted after j, a_j
// being when j's response arrived (after the server decided it): refills
// are capped by the capacity and consumption lowers the level by no more
// than it spends. Hence the bound grows with time,
//
//	ceiling_j(now) = done_j + cost_j + min(Ĉ, min_p (r_j,p + ⌊ρ_p·(now − a_j)⌋))
//
// over every policy p of the response, and a host that has spent its
// burst sends each next unit at the instant the server will have it:
// the ideal pace, with no 429. Until an admitted answer confirms the rate
// (it shows less left than a reset would have left, even had every other
// unit sent been counted before it: the unit came from a refill), one
// request at a time is sent on its strength. A quota that is not such a bucket (a fixed or sliding window,
// whose units come back at once at the reset or as old ones expire) thus
// meets one 429, the first time its burst is spent; the host then stops
// assuming a rate and waits for resets.
//
// The bound assumes the client is the quota's only user and knows each
// request's cost. A 429 proves an assumption wrong (another client shares
// the key, the limit shrank, the quota is not a bucket): the host then
// trusts nothing sent before it (a new epoch), assumes no rate, waits
// Retry-After (or without it the reset, or without either the backoff of
// the request's retry), and probes again.
//
// Each policy is also remembered on its own (see remembered), so that a
// probe waits until every policy can take its cost, and a policy that a
// later answer omits still counts what is sent. No wait a server asks for
// holds the host longer than maxServerWait.

// Learning modes of a host.
const (
	modeFresh = iota // nothing known yet: one probe at a time
	modeOpen         // the host sends no rate-limit headers: no bound
	modeKnown        // sends are bounded by ceiling
)

// defaultReset is assumed when a spent quota gives no reset time (the
// headers' own resolution), and as the wait of a refusal that gives none
// when the client draws no backoff of its own (a Pacer's).
const defaultReset = time.Second

// stallAfter is how long a host waits for an answer while attempts are in
// flight and none has answered or failed: past it, every attempt in flight
// counts as failed (its units perhaps counted, perhaps not, until the next
// probe settles them), so that a probe the server never answers, sent
// without a deadline, cannot hold its host for good.
const stallAfter = time.Minute

// hostState is the learned quota of one host. Its methods are safe for
// concurrent use.
type hostState struct {
	mu    sync.Mutex
	learn bool // false: only Retry-After holds apply (IgnoreRemaining)
	mode  int
	epoch uint64
	sent  int64 // units sent
	done  int64 // units answered
	// admitted is the units answered by an admission (a status below
	// 400), and began when the host's first send went (see release).
	admitted int64
	began    time.Time
	// ended is the units whose request has ended: its answer read (a
	// response's body closed, a call done), after which a concurrency
	// quota has its slot back (see end).
	ended    int64
	inflight int64 // units sent and not yet answered or failed
	// lost is the units of failed attempts (no answer: perhaps counted,
	// perhaps not) since the last probe; forgiven is every lost unit that
	// a probe has settled. A probe goes out after the quota's reset, when
	// the host is otherwise held, to learn the whole state: a lost unit
	// the server counted before deciding it shows in its answer, one
	// counted before the reset no longer matters. So requests granted from
	// the probe on count the lost units as answered (in their bound's base,
	// not as certainly counted). Without that, every failure would lower
	// every later bound for good.
	lost, forgiven int64
	// cut is the units of requests whose answer was closed before its end
	// since the last probe (see cutShort), cutForgiven every such unit a probe
	// has settled. Such a request never ends: the server may be serving it
	// still, its concurrency slot held until it has done, or may have
	// given the slot back. As a lost unit's, its slot is for a probe to
	// learn of: requests granted from the probe on count it as ended.
	cut, cutForgiven int64
	// now and eventual are the two bounds kept: the highest when it was
	// learned, and the one that rises highest in time (they are often the
	// same). Either proves its value; the host may send up to the larger.
	now, eventual bound
	// norate: a 429 proved that the quota is not a bucket refilled at the
	// rate its policy states (or not ours alone); rates are ignored.
	// trusted holds the policies whose rate an admitted answer confirmed;
	// until then one send at a time relies on a policy's rate (speculating
	// while it is out). A refill proven of one policy says nothing of
	// another's: a bucket of requests per second beside a fixed window per
	// minute.
	norate, speculating bool
	trusted             []string
	// lagFactor multiplies lagAllowance (1, 4, 16 …).
	lagFactor int64
	// last is the last answer to arrive, anchor an older one (at most
	// anchorAge older) to prove refills over longer spans; observed holds,
	// per policy, the fastest refill the answers have proven (units per
	// second).
	last, anchor answered
	observed     map[string]float64
	// probeAt is when a blocked host may send a probe: the reset of the
	// quota that set the ceiling. probing is true while one is out.
	probeAt time.Time
	probing bool
	// capacity is the most units ever seen available on an admitted
	// response (remaining + its cost): a lower bound of the quota's size.
	capacity int64
	// holdUntil is set by Retry-After on a 429 or 503: nothing is sent to
	// the host before it, learning or not.
	holdUntil time.Time
	changed   chan struct{} // closed and replaced when the state changes
	lastUsed  time.Time
	// quietSince is when the last attempt answered or failed, or when one
	// went out with none in flight; stall is how long the host waits after
	// it, with attempts in flight, before it writes them off (stallAfter).
	// gen counts the write-offs: an attempt of an older gen has been
	// counted as failed already.
	quietSince time.Time
	stall      time.Duration
	gen        uint64
	// holders counts the Transport's requests under way to the host, which
	// keep it from being forgotten; guarded by the Transport's mu.
	holders int
	// line holds the requests waiting for a send, in the order they came
	// (see acquire); lineWake is when its first was told to wait until
	// (zero: until the state changes), the soonest any other is granted,
	// and lineOnBody whether it waits for content bytes alone (see turn).
	line       []*waiter
	lineWake   time.Time
	lineOnBody bool
	// body, when set, is the learned quota of the host's content bytes
	// (RateLimit-Policy's qu="content-bytes"): each request spends its
	// content's bytes there, granted together with its cost here. Its
	// mu is taken while h.mu is held, never the other way round; it has
	// no line and no body of its own, and changes only through h, whose
	// waiters its changes wake.
	body *hostState
	// whole is the least quota a policy of the host's last answer to
	// state one stated (its q), in units, and wholePolicy that policy's
	// name; 0 when none was stated.
	whole       int64
	wholePolicy string
	// policies is every policy the host's answers have stated, at most
	// maxPolicies (see remembered).
	policies []remembered
	// answered counts the units answered so far, by when (see history),
	// for the windows of policies stated later.
	answered history
	// stated: the state learns of quotas only when an answer states them
	// (a host's body state): a refusal that states none of them, before
	// any has been, says nothing of them.
	stated bool
}

// ticket is one granted send.
type ticket struct {
	gen        uint64
	doneAtSend int64
	// admittedAtSend is the host's admitted units when it was sent, and
	// alone whether nothing else was in flight then.
	admittedAtSend int64
	alone          bool
	forgiven       int64 // the host's forgiven lost units at the send
	cutForgiven    int64 // the host's forgiven units cut short at the send
	cost           int64
	epoch          uint64
	probe          bool
	// speculative: sent on the strength of a rate not yet confirmed.
	speculative bool
	// sentAt is when the send was granted, last the last answer that had
	// arrived by then and anchor the host's anchor then.
	sentAt       time.Time
	last, anchor answered
	// body is the send of the request's content bytes in the host's
	// body state, when it has one.
	body *ticket
}

// answered is what an answer said: rem units remained of policy when the
// server decided the request (of cost units, sent at sentAt when done
// units had been answered), and sent units had been sent when the answer
// arrived.
type answered struct {
	ok         bool
	policy     string
	rem        int64
	sent       int64
	sentAt     time.Time
	doneAtSend int64
	cost       int64
	at         time.Time // when the answer arrived
}

// newHostState returns the state of a host not heard from yet; stall is
// how long it waits for attempts in flight (see stallAfter), 0 meaning
// stallAfter.
func newHostState(learn bool, stall time.Duration) *hostState {
	if stall <= 0 {
		stall = stallAfter
	}
	return &hostState{learn: learn, changed: make(chan struct{}), lagFactor: 1, stall: stall}
}

// How a send may go (see admits).
const (
	sendHeld        = iota // not now
	sendPlain              // within the bound
	sendProbe              // alone, to learn the quota anew
	sendSpeculative        // on the strength of a rate not yet confirmed
)

// try grants a send of cost units at now, or says until when to wait
// (wake; zero means "until the state changes"). It sends no content, as
// far as a content-bytes quota knows (see tryWith).
func (h *hostState) try(cost int64, now time.Time) (tk ticket, ok bool, wake time.Time) {
	return h.tryWith(cost, 0, now)
}

// admits says whether and how a send of cost units may go at now, or
// until when it must wait (wake; zero means "until the state changes").
// It changes nothing but what time alone changes (the write-off of
// attempts stalled in flight). h.mu is held.
func (h *hostState) admits(cost int64, now time.Time) (how int, wake time.Time) {
	h.lastUsed = now
	if stalled := h.stalledAt(); !stalled.IsZero() && !now.Before(stalled) {
		h.writeOff(now)
	}
	if now.Before(h.holdUntil) {
		return sendHeld, h.holdUntil
	}
	if h.learn && cost > 0 && h.mode != modeKnown {
		if ok, at := h.policiesAdmit(cost, sendPlain, now); !ok {
			return sendHeld, at // a policy stated alone has no room yet
		}
	}
	switch {
	case !h.learn || h.mode == modeOpen || cost == 0:
		return sendPlain, wake // a free request spends no quota
	case h.mode == modeFresh:
		if !h.probing {
			return sendProbe, wake
		}
		return sendHeld, wake // the probe's answer decides
	}
	how, wake = h.admitsKnown(cost, now)
	if how == sendHeld {
		return how, wake
	}
	if ok, at := h.policiesAdmit(cost, how, now); !ok {
		return sendHeld, at // a remembered policy cannot take cost yet
	}
	return how, wake
}

// admitsKnown is admits for a host whose quota is known (modeKnown), by
// the bounds kept. h.mu is held.
func (h *hostState) admitsKnown(cost int64, now time.Time) (how int, wake time.Time) {
	switch {
	case h.sent+cost <= h.proven():
		return sendPlain, wake
	case h.sent+cost <= h.trustedCeiling(now):
		return sendPlain, wake
	case h.sent+cost <= h.ceiling(now):
		if !h.speculating && h.inflight == 0 {
			return sendSpeculative, wake
		}
		return sendHeld, wake // wait for the answers, then to try the rate alone
	}
	rise := h.rises(h.sent+cost, now)
	switch {
	case now.Before(h.probeAt):
		return sendHeld, earlier(rise, h.probeAt)
	case !h.probing && (h.inflight == 0 || h.inflight+cost <= h.capacity) && h.slotsMayFit(h.sent+cost):
		// The quota has been restored since the ceiling's response; even if
		// every unit in flight is counted after the restore, cost fits.
		return sendProbe, wake
	}
	return sendHeld, rise // wait for a refill, the probe or the requests in flight or open
}

// slotsMayFit reports whether the concurrency policies of a bound kept
// may let sent reach need: whether a probe may find a slot free. They
// hold the requests that have not ended, answered or not (a body being
// read, an upgraded connection, a stream), until they end, whatever a
// reset says: only the slots of lost units, which never end, are for a
// probe to learn of. h.mu is held.
func (h *hostState) slotsMayFit(need int64) bool {
	lost := h.unsure()
	return h.now.slotsFit(need, h.ended, lost) || h.eventual.slotsFit(need, h.ended, lost)
}

// unsure is every unit lost or cut short so far, settled by a probe or
// not: units whose slots may be held or not. h.mu is held.
func (h *hostState) unsure() int64 {
	return algo.AddSat(algo.AddSat(h.lost, h.forgiven), algo.AddSat(h.cut, h.cutForgiven))
}

// waitsForSlots reports whether a send of cost units at now waits for
// requests of the host's to end, with no known end: a concurrency quota's
// slots are held, and neither a refill nor a probe after a reset would
// let it go (the probe's time, which admits reports as its wake, is when
// the host looks again, not when the wait ends). h.mu is held.
func (h *hostState) waitsForSlots(cost int64, now time.Time) bool {
	cost = min(cost, sluice.MaxQuantity)
	return h.learn && h.mode == modeKnown && cost > 0 &&
		h.sent+cost > h.ceiling(now) && !h.slotsMayFit(h.sent+cost)
}

// ceiling is the most units that may have been sent at now: the larger of
// the two bounds kept.
func (h *hostState) ceiling(now time.Time) int64 {
	return max(h.now.value(now, h.capacity, h.ended), h.eventual.value(now, h.capacity, h.ended))
}

// trustedCeiling is the ceiling with the refills of trusted policies
// alone.
func (h *hostState) trustedCeiling(now time.Time) int64 {
	a, b := h.now.ratedOnly(h.trusts), h.eventual.ratedOnly(h.trusts)
	return max(a.value(now, h.capacity, h.ended), b.value(now, h.capacity, h.ended))
}

// trusts reports whether an admitted answer confirmed policy's rate.
func (h *hostState) trusts(policy string) bool { return slices.Contains(h.trusted, policy) }

// trust records that an admitted answer confirmed policy's rate.
func (h *hostState) trust(policy string) {
	if !h.trusts(policy) && len(h.trusted) < maxPolicies {
		h.trusted = append(h.trusted, policy)
	}
}

// proven is the ceiling without refills since the responses.
func (h *hostState) proven() int64 {
	return max(h.now.proven(h.capacity, h.ended), h.eventual.proven(h.capacity, h.ended))
}

// rises returns when the ceiling reaches need by refills alone, or the zero
// time when no refill will raise it that far.
func (h *hostState) rises(need int64, now time.Time) time.Time {
	return earlier(h.now.reaches(need, now, h.capacity, h.ended), h.eventual.reaches(need, now, h.capacity, h.ended))
}

// holds reports whether the host holds requests at now, or would hold
// the next, for what it learned: a Retry-After, a quota that may be spent
// until its reset, a policy's window with units in it. Forgotten, such a
// host would send a probe at once, to meet the refusal it had learned of.
// h.mu is held.
func (h *hostState) holds(now time.Time) bool {
	if now.Before(h.holdUntil) {
		return true
	}
	if !h.learn {
		return false
	}
	if h.mode == modeKnown && now.Before(h.probeAt) {
		return true
	}
	for i := range h.policies {
		p := &h.policies[i]
		if p.reported && now.Before(p.resetAt) || p.win != nil && !p.win.empty(now) {
			return true
		}
	}
	if h.body != nil {
		h.body.mu.Lock()
		defer h.body.mu.Unlock()
		return h.body.holds(now)
	}
	return false
}

// underWay reports whether requests of the host are under way, as far as
// it counts their ends (a host that learns): sent and neither ended
// (their answer read to its end or closed when it had nothing to read, a
// call done) nor lost (failed, written off, cut short). A response's body
// still open, however long after its answer arrived, keeps its request
// under way, and its slot of a concurrency quota held. h.mu is held.
func (h *hostState) underWay() bool {
	return h.learn && h.sent > algo.AddSat(h.ended, h.unsure())
}

// stalledAt returns when the attempts in flight will have gone unanswered
// for h.stall (when they are written off), or the zero time when none is
// in flight.
func (h *hostState) stalledAt() time.Time {
	if h.inflight == 0 {
		return time.Time{}
	}
	return h.quietSince.Add(h.stall)
}

// writeOff counts every attempt in flight as failed at now: its units stay
// sent, and the next probe settles them as it settles failed attempts'
// (lost). Their answers, if they ever arrive, still teach (finish).
func (h *hostState) writeOff(now time.Time) {
	h.countAnswered(h.inflight, now)
	h.lost = algo.AddSat(h.lost, h.inflight)
	h.inflight = 0
	h.probing, h.speculating = false, false
	h.gen++
}

// grant sends cost units at now, as admits said (how). h.mu is held.
func (h *hostState) grant(cost int64, how int, now time.Time) ticket {
	h.spendPolicies(cost, now)
	if h.began.IsZero() {
		h.began = now
	}
	if h.inflight == 0 {
		h.quietSince = now
	}
	alone := h.inflight == 0
	if alone {
		h.markAlone(now)
	}
	probe := how == sendProbe
	if probe {
		h.probing = true
		h.forgiven, h.lost = algo.AddSat(h.forgiven, h.lost), 0
		h.cutForgiven, h.cut = algo.AddSat(h.cutForgiven, h.cut), 0
	}
	if how == sendSpeculative {
		h.speculating = true
	}
	h.sent = algo.AddSat(h.sent, cost)
	h.inflight += cost
	return ticket{gen: h.gen, doneAtSend: h.done, admittedAtSend: h.admitted, forgiven: h.forgiven, cutForgiven: h.cutForgiven, cost: cost, epoch: h.epoch,
		alone: alone, probe: probe, speculative: how == sendSpeculative, sentAt: now, last: h.last, anchor: h.anchor}
}

// broadcast wakes every waiter; h.mu is held.
func (h *hostState) broadcast() {
	close(h.changed)
	h.changed = make(chan struct{})
}
