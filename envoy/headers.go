package envoy

import (
	"slices"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
)

// Header modes, spelled as httplimit.ModeIETF and httplimit.ModeDraft6.
const (
	modeIETF   = "ietf"
	modeDraft6 = "draft-6"
)

// headers returns the response_headers_to_add of p decided as d, in parts.
func (p *plan) headers(mode string, d *sluice.Decision, code rlsv3.RateLimitResponse_Code, parts *responseParts) []*corev3.HeaderValue {
	switch mode {
	case modeIETF:
		policy, state := p.policy[:0], p.state[:0]
		var onePolicy string // the policy of the only limit, without a copy
		p.seen = slices.Grow(p.seen[:0], len(p.checks))[:len(p.checks)]
		clear(p.seen)
		limits := 0
		for _, s := range p.slots {
			if s.check < 0 || p.seen[s.check] || s.rule.shadow {
				continue
			}
			p.seen[s.check] = true
			st := &d.Statuses[s.check]
			if limits > 0 {
				policy = append(policy, ", "...)
				state = append(state, ", "...)
			}
			limits++
			onePolicy = s.rule.policy
			policy = append(policy, s.rule.policy...)
			state = append(state, '"')
			state = append(state, s.rule.label...)
			state = append(state, `";r=`...)
			state = strconv.AppendInt(state, st.Remaining, 10)
			state = append(state, ";t="...)
			state = strconv.AppendInt(state, ceilSeconds(st.ResetAfter), 10)
		}
		p.policy, p.state = policy, state
		if limits > 0 {
			if limits > 1 {
				onePolicy = string(policy)
			}
			parts.addHeader("RateLimit-Policy", onePolicy)
			parts.addHeader("RateLimit", string(state))
		}
	case modeDraft6:
		if l := d.Limit; len(p.checks) > 0 && !l.Shadow() {
			parts.addHeader("RateLimit-Limit", strconv.FormatInt(l.Burst(), 10))
			parts.addHeader("RateLimit-Remaining", strconv.FormatInt(d.Remaining, 10))
			parts.addHeader("RateLimit-Reset", strconv.FormatInt(ceilSeconds(d.ResetAfter), 10))
			pol := strconv.AppendInt(p.policy[:0], l.Quantity(), 10)
			pol = append(pol, ";w="...)
			pol = strconv.AppendInt(pol, int64(l.Window()/time.Second), 10)
			p.policy = pol
			parts.addHeader("RateLimit-Policy", string(pol))
		}
	}
	if code == rlsv3.RateLimitResponse_OVER_LIMIT && !p.blocked && d.RetryAfter != sluice.Never {
		parts.addHeader("Retry-After", strconv.FormatInt(max(1, ceilSeconds(d.RetryAfter)), 10))
	}
	if len(parts.headers) == 0 {
		return nil
	}
	return parts.headers
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	if d >= sluice.Never-time.Second {
		return int64(sluice.Never / time.Second)
	}
	return int64((d + time.Second - 1) / time.Second)
}
