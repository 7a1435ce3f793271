package envoy

import (
	"math"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice"
)

// Result is what one ShouldRateLimit call decided, for observers.
type Result struct {
	// Domain is the request's domain.
	Domain string
	// Allowed is the overall code: true for OK, false for OVER_LIMIT.
	Allowed bool
	// Descriptors holds one Outcome per descriptor of the request, in order.
	Descriptors []Outcome
}

// Outcome is what one descriptor of a request decided.
type Outcome struct {
	// Limit names the limit that applied (its rate_limit.name, or the name
	// derived from its place in the rules); "" when none applied: unknown
	// domain, no matching rule, or a limit replaced by another.
	Limit string
	// Result is "allowed", "limited" (the limit refused) or "shadow" (a
	// shadow-mode limit that would have refused), as in the result label of
	// sluice_decisions_total; "unlimited" for an unlimited rule; "" when no
	// limit applied. In a refused request a limit that would have admitted
	// it reports "allowed", though it consumed nothing.
	Result string
	// Remaining is the units the limit still holds after the decision, and
	// Capacity the most it can hold (sluice.Limit.Burst); both 0 for blocked
	// (requests_per_unit 0), unlimited and unmatched descriptors.
	Remaining, Capacity int64
}

// Outcome results.
const (
	resultAllowed   = "allowed"
	resultLimited   = "limited"
	resultShadow    = "shadow"
	resultUnlimited = "unlimited"
)

// response builds the RLS response of p decided as d.
func (p *plan) response(d *sluice.Decision) *rlsv3.RateLimitResponse {
	resp := &rlsv3.RateLimitResponse{
		OverallCode: rlsv3.RateLimitResponse_OK,
		Statuses:    make([]*rlsv3.RateLimitResponse_DescriptorStatus, len(p.slots)),
	}
	if p.blocked || len(p.checks) > 0 && !d.Allowed {
		resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
	}
	for i, s := range p.slots {
		st := &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OK}
		resp.Statuses[i] = st
		switch r := s.rule; {
		case r == nil:
		case r.unlimited:
			st.LimitRemaining = math.MaxUint32
		case r.blocked:
			st.CurrentLimit = r.currentLimit()
			if !r.shadow {
				st.Code = rlsv3.RateLimitResponse_OVER_LIMIT
			}
		default:
			c := &d.Statuses[s.check]
			st.CurrentLimit = r.currentLimit()
			st.LimitRemaining = uint32(min(c.Remaining, math.MaxUint32))
			st.DurationUntilReset = durationpb.New(c.ResetAfter)
			if !c.Allowed && !r.shadow {
				st.Code = rlsv3.RateLimitResponse_OVER_LIMIT
			}
		}
	}
	return resp
}

// fill records the outcome of p for observers.
func (res *Result) fill(p *plan, d *sluice.Decision, resp *rlsv3.RateLimitResponse) {
	res.Allowed = resp.OverallCode == rlsv3.RateLimitResponse_OK
	res.Descriptors = make([]Outcome, len(p.slots))
	for i, s := range p.slots {
		o := &res.Descriptors[i]
		switch r := s.rule; {
		case r == nil:
		case r.unlimited:
			o.Limit, o.Result = r.label, resultUnlimited
		case r.blocked:
			o.Limit, o.Result = r.label, resultLimited
			if r.shadow {
				o.Result = resultShadow
			}
		default:
			c := &d.Statuses[s.check]
			o.Limit, o.Remaining, o.Capacity = r.label, c.Remaining, r.limit.Burst()
			switch {
			case c.Allowed:
				o.Result = resultAllowed
			case r.shadow:
				o.Result = resultShadow
			default:
				o.Result = resultLimited
			}
		}
	}
}
