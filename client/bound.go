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
type bound struct {
	base int64     // done_j + cost_j
	at   time.Time // when the response arrived
	n    int
	rem  [maxPolicies]int64
	rate [maxPolicies]float64 // units per second
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

// value is the bound at now for a quota of capacity at least capacity.
func (b *bound) value(now time.Time, capacity int64) int64 {
	return b.valueAfter(max(now.Sub(b.at).Seconds(), 0), capacity)
}

// proven is the bound without refills: what the response itself said.
func (b *bound) proven(capacity int64) int64 { return b.valueAfter(0, capacity) }

// valueAfter is the bound el seconds after its response arrived.
func (b *bound) valueAfter(el float64, capacity int64) int64 {
	if b.n == 0 {
		return b.base
	}
	v, least := int64(math.MaxInt64), int64(math.MaxInt64)
	for i := range b.n {
		least = min(least, b.rem[i])
		v = min(v, algo.AddSat(b.rem[i], refill(b.rate[i], el)))
	}
	// Refills never fill the bucket beyond its capacity; what the response
	// said is proven whatever the capacity is thought to be.
	return algo.AddSat(b.base, min(v, max(capacity, least)))
}

// top is the highest value the bound reaches in time.
func (b *bound) top(capacity int64) int64 { return b.valueAfter(math.MaxFloat64, capacity) }

// reaches returns the first time from now at which the bound is at least
// need, or the zero time when it never is; a time beyond maxHint after the
// response is saturated to it.
func (b *bound) reaches(need int64, now time.Time, capacity int64) time.Time {
	if b.n == 0 || b.top(capacity) < need {
		return time.Time{}
	}
	missing := need - b.base // > 0 is the case of interest: value(now) < need
	var wait float64
	for i := range b.n {
		if short := missing - b.rem[i]; short > 0 {
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
