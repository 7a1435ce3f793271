package envoy

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/sluice-dev/sluice"
)

// After the decision, settle brings the state and the statuses of a
// request's fixed windows to what envoyproxy/ratelimit would have: it
// counts the hits of every request, so a window that a request went over
// stays over until it ends, and even a peek (hits_addend 0) at it is
// OVER_LIMIT; a window that a request merely filled is not over.
//
// sluice never counts past a limit, so a refused fixed window (a shadow
// one too) is marked over instead: it spends what is left of it, and a
// check of one unit per window under the key "<key>:over", and a state ID
// of its own (see recordID), records that it went over, which a later peek
// at the window reads. Only refused checks
// spend; the others of the request spend nothing (the all-or-nothing
// rule). An error of these calls leaves the state as it is: the answer of
// the request is already decided.

// exhaustTries bounds the calls that spend one refused window: each spends
// what the last answer said was left, and is refused, spending nothing, if
// another request took some of it in between.
const exhaustTries = 3

// overKey is the suffix of the key that records that a fixed window went
// over its limit (':' never appears unescaped in a descriptor's key).
const overKey = ":over"

// overLimit returns the limit of l's over-limit record: one unit per
// window of l, named as l, with state ID id, the rule's record ID (see
// recordID), which no limit of the rules has.
func overLimit(l sluice.Limit, id string) sluice.Limit {
	return sluice.FixedWindow(1, l.Window()).Named(l.Name()).WithID(id).WithShadow(l.Shadow())
}

// refused reports whether slot s (which has a check) is over its limit:
// refused, or a peek at a window that went over (see wentOver).
func (p *plan) refused(s slot, d *sluice.Decision) bool {
	if s.rule != nil && s.rule.blocked {
		return p.hit(s, d)
	}
	return !d.Statuses[s.check].Allowed || s.wentOver
}

// wentOver reports whether the peek d (every cost 0) finds the window of
// slot s, a peek at an aligned fixed window, past its limit as
// envoyproxy/ratelimit counts it: its over-limit record is spent and the
// window has nothing left. A record says that envoyproxy/ratelimit counted
// more hits than sluice did (the refused ones); that is past the limit
// only when sluice's count is at it, which it is once a request went over
// in the window, unless a reload raised the limit (or lifted a
// requests_per_unit 0 rule, whose record of hits is the same) since. A
// full window without a record may be past its limit too (see
// readPastLimit).
func wentOver(s slot, d *sluice.Decision) bool {
	return s.over >= 0 && d.Statuses[s.over].Remaining == 0 && d.Statuses[s.check].Remaining == 0
}

// peekOver decides a request that peeks at a fixed window (hits_addend
// 0), or that a requests_per_unit 0 rule blocks, before it spends
// anything: when such a window went over, or the request is blocked, the
// request is refused and true is returned with d holding every check
// decided as a peek, except that a check whose cost does not fit in what
// its limit holds is refused, with its wait, as deciding the request would
// refuse it (see refuseUnfit); settle spends and marks over those of fixed
// windows counted in their Unix windows, and nothing else is spent.
// Otherwise (and for a request that neither peeks so nor is blocked,
// without a call) it returns false and leaves p's checks as they were. A
// peek that finds a window full without an over-limit record makes one
// more call (see readPastLimit), and so does a refusal beside which a
// check of another algorithm (or a fixed window counted in sluice's
// windows) does not fit its cost (see refuseUnfit). scratch is working
// memory.
func (p *plan) peekOver(ctx context.Context, l *sluice.Limiter, d, scratch *sluice.Decision) (bool, error) {
	if !p.blocked && !slices.ContainsFunc(p.slots, func(s slot) bool { return s.over >= 0 }) {
		return false, nil
	}
	p.costs = p.costs[:0]
	for i := range p.checks {
		p.costs = append(p.costs, p.checks[i].Cost)
		p.checks[i].Cost = 0
	}
	if err := p.decide(ctx, l, d, scratch); err != nil {
		return false, err
	}
	for i := range p.slots {
		if s := &p.slots[i]; s.over >= 0 && !s.rule.blocked {
			s.wentOver = wentOver(*s, d)
		}
	}
	if err := p.readPastLimit(ctx, l, d, scratch); err != nil {
		return false, err
	}
	refused := p.blocked
	for _, s := range p.slots {
		if s.over >= 0 && !s.rule.shadow && p.refused(s, d) {
			refused = true
		}
	}
	for i, c := range p.costs {
		p.checks[i].Cost = c
	}
	if !refused {
		return false, nil
	}
	p.refuseUnfit(ctx, l, d, scratch)
	return true, nil
}

// refuseUnfit completes d, the peek (every cost 0) of a request that
// peekOver refuses, as deciding the request would: each check whose cost
// is above what the peek found its limit holds is refused too. A fixed
// window counted in its Unix window admits the request again when that
// window ends (see retryAfter), and a cost above a limit's burst never;
// the wait of any other check depends on its state (a sliding log's
// entries, a bucket's fraction of a unit), so one more call decides those
// checks at their costs beside a check that refuses whatever its state:
// a cost above the burst of the window (or of the block list's record of
// hits) that refuses the request, so that the call spends nothing. Each of
// them takes that call's status: refused with the wait for its cost, or,
// when its limit admits it, allowed with what it holds (as a store reports
// a check that fits in a refused call; a leaky-bucket queue admits a cost
// that does not fit at once with a delay, holding nothing). The call
// carries the refusing window's over-limit record as a peek, which takes
// it past an over-limit cache to the store; a status that a cache answered
// without evaluating it (sluice.Status.Undecided, see evaluate: a call
// refused by a block list, without such a peek) is refused with the time
// its limit takes to be whole again, which admits any cost up to its
// burst. So is every such check when the call fails: the request is
// refused all the same, as peekOver decided, and the error is dropped, as
// settle drops those of its calls.
func (p *plan) refuseUnfit(ctx context.Context, l *sluice.Limiter, d, scratch *sluice.Decision) {
	p.order = p.order[:0] // the checks whose wait only their state tells
	for _, s := range p.slots {
		if s.check < 0 {
			continue
		}
		c, st := &p.checks[s.check], &d.Statuses[s.check]
		switch {
		case !st.Allowed || c.Cost <= st.Remaining:
		case c.Cost > c.Limit.Burst():
			st.Allowed, st.RetryAfter = false, sluice.Never // as a decision refuses a cost above the burst
		case s.aligned:
			st.Allowed = false
		case !slices.Contains(p.order, s.check):
			p.order = append(p.order, s.check)
		}
	}
	if len(p.order) == 0 {
		return
	}
	refuser, peek := -1, -1
	for _, s := range p.slots {
		switch {
		case s.over < 0 || s.rule.shadow || !p.refused(s, d):
		case !s.rule.blocked:
			refuser, peek = s.check, s.over
		case refuser < 0:
			refuser = s.over
		}
	}
	if refuser < 0 { // peekOver refuses for such a slot: not reached
		for _, k := range p.order {
			refuseWhole(&d.Statuses[k])
		}
		return
	}
	for k := range p.checks {
		if peek < 0 && k != refuser && p.checks[k].Cost == 0 {
			peek = k
		}
	}
	refuse := p.checks[refuser]
	refuse.Cost = refuse.Limit.Burst() + 1
	for from := 0; from < len(p.order); {
		to := min(len(p.order), from+sluice.MaxChecks-2)
		p.batch = p.batch[:0]
		for _, k := range p.order[from:to] {
			p.batch = append(p.batch, p.checks[k])
		}
		if peek >= 0 {
			p.batch = append(p.batch, p.checks[peek])
		}
		p.batch = append(p.batch, refuse)
		*scratch = sluice.Decision{Statuses: scratch.Statuses[:0], Violated: scratch.Violated[:0]}
		if l.Allow(ctx, p.batch, scratch) != nil {
			for _, k := range p.order[from:] {
				refuseWhole(&d.Statuses[k])
			}
			return
		}
		for j, k := range p.order[from:to] {
			st, got := &d.Statuses[k], scratch.Statuses[j]
			if got.Undecided {
				refuseWhole(st)
				continue
			}
			*st = got
		}
		from = to
	}
}

// refuseWhole refuses st, a peek's status of a check whose cost is above
// what it found the limit holds, until the limit is whole again, when any
// cost up to its burst fits.
func refuseWhole(st *sluice.Status) {
	st.Allowed, st.RetryAfter = false, max(st.ResetAfter, time.Microsecond)
}

// readPastLimit completes wentOver for the peeks that the peek d (every
// cost 0) found at a full window without an over-limit record: such a
// window is past its limit as envoyproxy/ratelimit counts it when its
// count is above the check's quantity, which a reload that lowered the
// limit below the window's count leaves it (sluice admits nothing past a
// limit, but keeps the count it had). One peek at those windows with the
// largest quantity reads their counts whole; its error is returned.
func (p *plan) readPastLimit(ctx context.Context, l *sluice.Limiter, d, scratch *sluice.Decision) error {
	p.order, p.batch = p.order[:0], p.batch[:0]
	for _, s := range p.slots {
		if s.over < 0 || s.rule.blocked || s.wentOver || d.Statuses[s.check].Remaining > 0 || slices.Contains(p.order, s.check) {
			continue
		}
		c := p.checks[s.check]
		c.Limit, c.Cost = withQuantity(c.Limit, sluice.MaxQuantity), 0
		p.order = append(p.order, s.check)
		p.batch = append(p.batch, c)
	}
	if len(p.batch) == 0 {
		return nil
	}
	*scratch = sluice.Decision{Statuses: scratch.Statuses[:0], Violated: scratch.Violated[:0]}
	if err := l.Allow(ctx, p.batch, scratch); err != nil {
		return err
	}
	for j, k := range p.order {
		// A count is at most a quantity of the rules, a requests_per_unit
		// (a uint32): a larger one is read against a share of the largest
		// quantity (a failover deciding alone on its instance's share, see
		// sluice.Limit.Scale), which tells nothing.
		count := sluice.MaxQuantity - scratch.Statuses[j].Remaining
		if count <= p.checks[k].Limit.Quantity() || count > math.MaxUint32 {
			continue
		}
		for i := range p.slots {
			if s := &p.slots[i]; s.check == k && s.over >= 0 && !s.rule.blocked {
				s.wentOver = true
			}
		}
	}
	return nil
}

// maxMarks bounds the windows that marks remembers.
const maxMarks = 1 << 14

// marks remembers the windows this service has marked over, so that the
// refusals that follow (which an over-limit cache answers without a round
// trip) cost no call to mark them again: each window is marked at most
// once per service, as long as it is remembered. Forgetting is safe: it
// only costs a call that finds the window marked.
//
// A window is the store's, which the service's clock does not know: it is
// told by its end as the service sees it, the service's time plus the
// store's ResetAfter. That is the store's end shifted by the offset of the
// two clocks (and the call's latency), so two refusals in one window see
// ends that differ by the change of that offset, and refusals in two
// windows ends a window apart, whatever the offset itself.
type marks struct {
	mu sync.Mutex
	m  map[string]int64 // store key and limit state ID → the end of the window it was marked in
}

// seen reports whether key was marked in the store's window of window µs
// that ends at end (µs since sluice.Epoch, as above): whether the window
// marked last ended within half a window of it. It remembers that key is
// marked in this one.
func (m *marks) seen(key string, end, window int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.m[key]; ok && max(e-end, end-e) < window/2 {
		return true
	}
	if m.m == nil || len(m.m) >= maxMarks {
		m.m = make(map[string]int64)
	}
	m.m[key] = end
	return false
}

// marked reports whether marks has seen the window of check k, decided as
// st (refused with nothing left) at the service's time now, marked over,
// and remembers that it is now. A status that tells no end (an over-limit
// cache's, which a peek could not fill in) is never seen.
func (p *plan) marked(m *marks, k int, st *sluice.Status, now time.Time) bool {
	if st.ResetAfter <= 0 {
		return false
	}
	c := &p.checks[k]
	end := sluice.MicrosSinceEpoch(now) + int64(st.ResetAfter/time.Microsecond)
	return m.seen(c.Key+"\x00"+c.Limit.ID(), end, int64(c.Limit.Window()/time.Microsecond))
}

// settle runs after d decided p at the service's time now: it reads the
// statuses that an over-limit cache refused without evaluating, and marks
// the refused fixed windows over (those that marked has not seen marked),
// but for a check refused for want of room (sluice.Status.NoRoom), which
// counted nothing: its window did not go over. scratch is working memory.
func (p *plan) settle(ctx context.Context, l *sluice.Limiter, now time.Time, d, scratch *sluice.Decision, marked *marks) {
	if !d.Allowed {
		p.evaluate(ctx, l, d, scratch)
	}
	p.left = p.left[:0]
	for i := range d.Statuses {
		p.left = append(p.left, d.Statuses[i].Remaining)
	}
	if !d.Allowed {
		p.readPast(ctx, l, d, scratch)
	}
	for i := range p.slots {
		s := &p.slots[i]
		if s.rule != nil && s.rule.blocked && s.cost > 0 && s.over >= 0 {
			p.recordHit(ctx, l, s, d, scratch)
			continue
		}
		if s.check < 0 || !s.aligned {
			continue
		}
		st := &d.Statuses[s.check]
		if st.Allowed || p.checks[s.check].Cost == 0 || st.NoRoom ||
			st.Remaining == 0 && p.marked(marked, s.check, st, now) {
			continue
		}
		c := [1]sluice.Check{{Key: p.checks[s.check].Key + overKey, Limit: overLimit(p.checks[s.check].Limit, s.rule.overID), Cost: 1}}
		if !p.allow(ctx, l, c[:], scratch) {
			continue
		}
		c[0] = p.checks[s.check]
		c[0].Cost = st.Remaining
		for range exhaustTries {
			if c[0].Cost == 0 || p.allow(ctx, l, c[:], scratch) {
				break
			}
			c[0].Cost = scratch.Statuses[0].Remaining
		}
		st.Remaining = 0 // identical descriptors share the check
	}
}

// recordHit spends the one unit of the record of hits of slot s, of a
// blocked rule that its request hit, unless an identical descriptor before
// it did, or the request's peek at the record (in d) found it spent in the
// store's window: spent, with an end to reset at (a status an over-limit
// cache did not evaluate has none).
func (p *plan) recordHit(ctx context.Context, l *sluice.Limiter, s *slot, d, scratch *sluice.Decision) {
	if st := &d.Statuses[s.over]; s.hitBefore || st.Remaining == 0 && st.ResetAfter > 0 {
		return
	}
	rec := p.checks[s.over]
	rec.Cost = 1
	c := [1]sluice.Check{rec}
	p.allow(ctx, l, c[:], scratch)
}

// readPast completes p.left for the refused checks that identical
// descriptors of different quantities share (see bind) and that had
// nothing left: how far the count was past the check's quantity, as a
// negative left, read by a peek at the largest of their quantities, so
// that each descriptor is told apart against its own (see occurrence).
// When even that one is spent, the count is taken to be that quantity;
// on an error, past every one of them, and each descriptor is reported
// over. A check refused for want of room (sluice.Status.NoRoom) is not
// read: nothing of the key's was kept, so a peek finds its window empty,
// which tells nothing of its use, and its left stays 0.
func (p *plan) readPast(ctx context.Context, l *sluice.Limiter, d, scratch *sluice.Decision) {
	for k := range p.checks {
		c := &p.checks[k]
		if st := &d.Statuses[k]; st.Allowed || st.NoRoom || p.left[k] > 0 || c.Cost == 0 {
			continue
		}
		widest := c.Limit.Quantity()
		for _, s := range p.slots {
			if s.check == k && sameWindow(s.limit, c.Limit) {
				widest = max(widest, s.limit.Quantity())
			}
		}
		if widest == c.Limit.Quantity() {
			continue
		}
		p.left[k] = -widest
		peek := [1]sluice.Check{{Key: c.Key, Limit: withQuantity(c.Limit, widest)}}
		if p.allow(ctx, l, peek[:], scratch) {
			p.left[k] = scratch.Statuses[0].Remaining - (widest - c.Limit.Quantity())
		}
	}
}

// allow decides checks into scratch and reports whether the only check
// was allowed; false on error.
func (p *plan) allow(ctx context.Context, l *sluice.Limiter, checks []sluice.Check, scratch *sluice.Decision) bool {
	*scratch = sluice.Decision{Statuses: scratch.Statuses[:0], Violated: scratch.Violated[:0]}
	return l.Allow(ctx, checks, scratch) == nil && scratch.Statuses[0].Allowed
}

// evaluate fills the statuses of a refused call that were not evaluated
// (sluice.Status.Undecided: an over-limit cache refuses a call it knows
// one check of refuses without asking the store, and states no figure of
// the others) with a peek at them, which goes past the cache to the store:
// they are then measured, as a store reports a check that fitted a refused
// call. When the peek fails they stay Undecided, and the response tells no
// figure of them.
func (p *plan) evaluate(ctx context.Context, l *sluice.Limiter, d, scratch *sluice.Decision) {
	// At most one check per descriptor costs something: the peeks fit in
	// one call.
	p.order, p.batch = p.order[:0], p.batch[:0]
	for i, st := range d.Statuses {
		if st.Undecided && p.checks[i].Cost > 0 {
			c := p.checks[i]
			c.Cost = 0
			p.order = append(p.order, i)
			p.batch = append(p.batch, c)
		}
	}
	if len(p.batch) == 0 {
		return
	}
	*scratch = sluice.Decision{Statuses: scratch.Statuses[:0], Violated: scratch.Violated[:0]}
	if l.Allow(ctx, p.batch, scratch) != nil {
		return
	}
	for j, got := range scratch.Statuses {
		// As the store reports a check a refused call did not charge; a
		// peek no store decided (a failover's policy) measures nothing
		// either.
		st := &d.Statuses[p.order[j]]
		st.Remaining, st.ResetAfter = got.Remaining, got.ResetAfter
		st.Unavailable, st.Undecided = got.Unavailable, got.Undecided
	}
}
