package client

import (
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// refill returns the units that r, the answer to tk, proves came back
// between the last answer before tk was sent (j) and tk's decision (0 when
// it proves none), the longest that span can have lasted (from j's send to
// r's arrival), and whether a reset rather than a refill may explain them.
//
// Without a refill the server would have had at most rem_j of the policy
// when it decided tk, less every unit certainly counted in between (sent
// after j's answer arrived, answered before tk left: done_k − sent_j); it
// had remaining + cost_k. Had the quota been reset in between instead, it
// would have had all its capacity but what it counted after the reset and
// before tk: at most every unit but j and tk not answered before j left
// (sent − done_j − cost_j − cost_k).
func (h *hostState) refill(tk ticket, j answered, r response) (units int64, span time.Duration, reset bool) {
	if !j.ok || j.policy != r.rl.Policy || j.sentAt.After(tk.sentAt) {
		return 0, 0, false
	}
	level := algo.AddSat(r.rl.Remaining, tk.cost)
	gain := level - (j.rem - max(tk.doneAtSend-j.sent, 0))
	if gain <= 0 {
		return 0, 0, false
	}
	others := max(h.sent-j.doneAtSend-j.cost-tk.cost, 0)
	return gain, r.at.Sub(j.sentAt), algo.AddSat(level, others) >= h.capacity
}

// Proving a refill rate.
const (
	// lagAllowance is the first allowance that widens every span a refill
	// is proven over: a server may decide at a time that lags its clock (a
	// store reading a cached time, a scheduler that ran it late), so the
	// span between two of its decisions may exceed the span between the
	// client's send and arrival by as much as the lags differ. Each 429
	// met while proven rates were in use multiplies it by 4, up to
	// maxLagAllowance.
	lagAllowance    = 50 * time.Millisecond
	maxLagAllowance = 3200 * time.Millisecond
	// anchorAge is how old the anchor answer may grow: spans of up to it
	// prove rates that the allowance and the rounding blur the least.
	anchorAge = 2 * time.Second
)

// refillRate is the rate of refill, in units per second, that r, the
// answer to tk, proves since the earlier answer j: more than g − 1 units
// (remaining is rounded down: j's level may have been up to a unit more
// than it said) over the span and the lag allowance; 0 when it proves
// none. A gain that a reset may explain counts too: if the quota is a
// bucket it is a refill (one that may have filled it, hence a lower bound);
// if it is a window, the first request sent on its strength is refused and
// rates are dropped.
func (h *hostState) refillRate(tk ticket, j answered, r response) float64 {
	units, span, _ := h.refill(tk, j, r)
	if units <= 1 || span < 0 {
		return 0
	}
	return float64(units-1) / (span + lagAllowance*time.Duration(h.lagFactor)).Seconds()
}

// observe records that policy's quota comes back at rate units per second
// at least.
func (h *hostState) observe(policy string, rate float64) {
	if rate <= 0 {
		return
	}
	if h.observed == nil {
		h.observed = map[string]float64{}
	}
	if _, known := h.observed[policy]; known || len(h.observed) < maxPolicies {
		h.observed[policy] = max(h.observed[policy], rate)
	}
}

// distrustRates reacts to a 429 met while the bounds assumed rates. If
// the quota was proven a bucket and the answers' rates were in use, they
// may have been proven across a lag longer than the allowance: they are
// forgotten, and the allowance grows. Otherwise no rate is assumed again.
func (h *hostState) distrustRates() {
	if len(h.trusted) > 0 && len(h.observed) > 0 && time.Duration(4*h.lagFactor)*lagAllowance <= maxLagAllowance {
		h.observed = nil
		h.lagFactor *= 4
		return
	}
	h.dropRates()
}

// dropRates stops assuming that the quota comes back at a rate: the bounds
// kept prove only what their responses said.
func (h *hostState) dropRates() {
	h.norate, h.observed = true, nil
	h.now.rate, h.eventual.rate = [maxPolicies]float64{}, [maxPolicies]float64{}
}
