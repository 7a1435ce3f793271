package client

import (
	"math"
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// maxPolicies is the most policies of one response a bound keeps.
const maxPolicies = 8

// bound is what one response proves about a host's quota (see hostState):
// sent may reach base + min(Ĉ, min_p (rem_p + ⌊rate_p·(now − at)⌋)). A
// policy of rate 0 is assumed not to come back before its reset; a bound
// of no policy proves base alone.
//
// A concurrency policy (RateLimit-Policy's qu="concurrent-requests")
// counts requests in flight: its slots come back as requests end (their
// answer whole: a server holds a slot while it writes the body), not with
// time. When the server decided j, cost_j + rem_p of its slots were not
// held by others, so at least that many are the client's: its units not
// yet ended may number that many, sent ≤ ended + forgiven_j + cost_j +
// rem_p, with no cap; with ended_j = done_j, that is base + rem_p + ended
// − ended_j. No request of the client's counts as holding a slot when j
// was decided, answered or not: one whose answer had arrived may have
// given its slot back just before (its body's last bytes still on the
// way), and rem_p counts that slot free already. A unit cut short (its
// body closed before its end) never ends: ended_j is done_j less the cut
// units a probe had settled when j was sent, which count as ended. Such
// a policy has no reset nor rate: a request it holds waits for a request
// to end, not for a reset (the slots of lost units, which never end,
// wait for a probe: see hostState.slotsMayFit).
type bound struct {
	base  int64 // done_j + forgiven_j + cost_j
	ended int64 // ended_j: the units ended that the policies count from
	// forgiven is forgiven_j, the lost units the base counts as answered
	// (see hostState.lost), with the units cut short that ended_j counts
	// as ended (see hostState.cutShort): the other lost or cut units never
	// end, and may hold slots or not (see slotsFit).
	forgiven int64
	at       time.Time // when the response arrived
	n        int
	rem      [maxPolicies]int64
	rate     [maxPolicies]float64 // units per second
	name     [maxPolicies]string  // the policies' names
	// inFlight marks the concurrency policies.
	inFlight [maxPolicies]bool
	// refusal marks the bound a 429 for a concurrency quota left when it
	// may have counted another client's requests (see
	// hostState.slotsRefused): its slots are those the host's own requests
	// held, but another client's may be back since.
	refusal bool
}

// slotsOnly reports whether the bound is of concurrency policies alone:
// of one at least, and of none that comes back with time.
func (b *bound) slotsOnly() bool {
	for i := range b.n {
		if !b.inFlight[i] {
			return false
		}
	}
	return b.n > 0
}

// grows reports whether the bound rises with time.
func (b *bound) grows() bool {
	for i := range b.n {
		if b.rate[i] > 0 {
			return true
		}
	}
	return false
}

// ratedOnly is b with the rates of the policies keep refuses set to 0.
func (b bound) ratedOnly(keep func(policy string) bool) bound {
	for i := range b.n {
		if b.rate[i] > 0 && !keep(b.name[i]) {
			b.rate[i] = 0
		}
	}
	return b
}

// value is the bound at now for a quota of capacity at least capacity,
// ended units having ended.
func (b *bound) value(now time.Time, capacity, ended int64) int64 {
	return b.valueAfter(max(now.Sub(b.at).Seconds(), 0), capacity, ended)
}

// proven is the bound without refills: what the response itself said, and
// the requests ended since.
func (b *bound) proven(capacity, ended int64) int64 { return b.valueAfter(0, capacity, ended) }

// valueAfter is the bound el seconds after its response arrived, ended
// units having ended.
func (b *bound) valueAfter(el float64, capacity, ended int64) int64 {
	if b.n == 0 {
		return b.base
	}
	v, least, rated := int64(math.MaxInt64), int64(math.MaxInt64), false
	slots := int64(math.MaxInt64)
	for i := range b.n {
		if b.inFlight[i] {
			slots = min(slots, b.slots(i, ended))
			continue
		}
		rated = true
		least = min(least, b.rem[i])
		v = min(v, algo.AddSat(b.rem[i], refill(b.rate[i], el)))
	}
	if rated {
		// Refills never fill the bucket beyond its capacity; what the
		// response said is proven whatever the capacity is thought to be.
		v = min(v, max(capacity, least))
	}
	return algo.AddSat(b.base, min(v, slots))
}

// slotsFit reports whether b's concurrency policies would let sent reach
// need, ended units having ended, were the slot of every unit lost so far
// (lost: failed, written off or cut short, forgiven or not) back as well:
// whether a probe may find a slot that the bound counts as held. A unit
// that has neither ended nor been lost holds its slot for sure, however
// long. A bound of no concurrency policy fits, and so does a refusal's: a
// probe may find free the slot of another client's request that the 429
// counted.
func (b *bound) slotsFit(need, ended, lost int64) bool {
	if b.refusal {
		return true
	}
	back := max(lost-b.forgiven, 0)
	for i := range b.n {
		if b.inFlight[i] && algo.AddSat(b.base, algo.AddSat(b.slots(i, ended), back)) < need {
			return false
		}
	}
	return true
}

// slots is what concurrency policy i adds to the base, ended units having
// ended: rem_i + ended − ended_j, less than rem_i while requests that had
// been answered when j was sent have not ended.
func (b *bound) slots(i int, ended int64) int64 {
	return algo.AddSat(b.rem[i], algo.AddSat(ended, -b.ended))
}

// top is the highest value the bound reaches in time, ended units having
// ended.
func (b *bound) top(capacity, ended int64) int64 {
	return b.valueAfter(math.MaxFloat64, capacity, ended)
}

// reaches returns the first time from now at which the bound is at least
// need, ended units having ended, or the zero time when it never is by
// time alone (a concurrency policy waits for requests to end); a time
// beyond maxHint after the response is saturated to it.
func (b *bound) reaches(need int64, now time.Time, capacity, ended int64) time.Time {
	if b.n == 0 || b.top(capacity, ended) < need {
		return time.Time{}
	}
	missing := need - b.base // > 0 is the case of interest: value(now) < need
	var wait float64
	for i := range b.n {
		rem := b.rem[i]
		if b.inFlight[i] {
			rem = b.slots(i, ended)
		}
		if short := missing - rem; short > 0 {
			if b.rate[i] <= 0 {
				return time.Time{}
			}
			wait = max(wait, float64(short)/b.rate[i])
		}
	}
	// A refill that takes longer than any hint is too far to wait for:
	// saturating there keeps the conversion below from overflowing (into
	// the past, hence "now"). One microsecond more absorbs the rounding of
	// the division.
	wait = min(wait, maxHint.Seconds())
	at := b.at.Add(time.Duration(math.Ceil(wait*1e6)+1) * time.Microsecond)
	return later(at, now)
}

// refill is ⌊rate·el⌋ units, saturated.
func refill(rate, el float64) int64 {
	u := math.Floor(rate * el)
	if !(u > 0) {
		return 0
	}
	if u >= 1<<62 {
		return 1 << 62
	}
	return int64(u)
}
