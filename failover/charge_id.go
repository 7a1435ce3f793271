package failover

import (
	"crypto/rand"
	"math"
	"math/bits"
	"time"

	"github.com/sluice-dev/sluice"
)

// ChargeHorizon returns how long a unit admitted under l can go on limiting
// anyone: the longest any store's state of l, or of a share of it, counts
// it. That is l's Window for a fixed window (a calendar limit's longest
// period) and a sliding log; two windows for a sliding counter, whose
// estimate weighs the previous window; and for a bucket (token, leaky,
// GCRA) the time it takes to refill a whole Burst, Burst·Window/Quantity,
// plus its MaxWait. Past it, a charge of the unit takes nothing that any
// decision would miss. Concurrency limits are never charged: 0. The result
// saturates at the largest Duration.
//
// A Store keeps a charge whose call failed in doubt for ChargeHorizon of
// its limit from the moment it was first sent (see Options.ChargeOnce): a
// primary that remembers each id at least that long from the moment it
// took the id's units counts every charge once.
func ChargeHorizon(l sluice.Limit) time.Duration {
	w := l.Window().Microseconds()
	var us uint64
	switch l.Algorithm() {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingLog:
		us = uint64(max(w, 0))
	case sluice.AlgorithmSlidingCounter:
		us = uint64(max(w, 0)) * 2 // a Window is at most 2^45 µs
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmLeakyBucket, sluice.AlgorithmGCRA:
		if q, b := l.Quantity(), l.Burst(); q > 0 && b > 0 && w > 0 {
			hi, lo := bits.Mul64(uint64(b), uint64(w))
			if hi >= uint64(q) {
				return math.MaxInt64
			}
			if us, _ = bits.Div64(hi, lo, uint64(q)); us >= math.MaxInt64 {
				return math.MaxInt64
			}
			us += 1 + uint64(max(l.MaxWait().Microseconds(), 0)) // ⌊B·W/Q⌋ + 1 ≥ ⌈B·W/Q⌉
		}
	}
	if us > math.MaxInt64/uint64(time.Microsecond) {
		return math.MaxInt64
	}
	return time.Duration(us) * time.Microsecond
}

// A pending charge is units of an account under an id, sent at since (or
// about to be), in ns on the Store's timeline (Store.elapsed: a clock set
// back does not lengthen its horizon, as it does not lengthen Redis's
// memory of its id); units 0 is none.
type pending struct {
	id    string
	units int64
	since int64
}

// newChargeID returns a new charge id: 26 random characters of the base32
// alphabet (130 bits), unique across the instances that share a primary.
func newChargeID() string { return rand.Text() }
