package envoy

import (
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

// headers returns the response_headers_to_add of p decided as d.
func (p *plan) headers(mode string, d *sluice.Decision, code rlsv3.RateLimitResponse_Code) []*corev3.HeaderValue {
	var out []*corev3.HeaderValue
	add := func(k string, v []byte) { out = append(out, &corev3.HeaderValue{Key: k, Value: string(v)}) }
	switch mode {
	case modeIETF:
		var policy, state []byte
		seen := make([]bool, len(p.checks))
		for _, s := range p.slots {
			if s.check < 0 || seen[s.check] || s.rule.shadow {
				continue
			}
			seen[s.check] = true
			st := &d.Statuses[s.check]
			if len(policy) > 0 {
				policy = append(policy, ", "...)
				state = append(state, ", "...)
			}
			policy = append(policy, s.rule.policy...)
			state = append(state, '"')
			state = append(state, s.rule.label...)
			state = append(state, `";r=`...)
			state = strconv.AppendInt(state, st.Remaining, 10)
			state = append(state, ";t="...)
			state = strconv.AppendInt(state, ceilSeconds(st.ResetAfter), 10)
		}
		if len(policy) > 0 {
			add("RateLimit-Policy", policy)
			add("RateLimit", state)
		}
	case modeDraft6:
		if l := d.Limit; len(p.checks) > 0 && !l.Shadow() {
			add("RateLimit-Limit", strconv.AppendInt(nil, l.Burst(), 10))
			add("RateLimit-Remaining", strconv.AppendInt(nil, d.Remaining, 10))
			add("RateLimit-Reset", strconv.AppendInt(nil, ceilSeconds(d.ResetAfter), 10))
			pol := strconv.AppendInt(nil, l.Quantity(), 10)
			pol = append(pol, ";w="...)
			add("RateLimit-Policy", strconv.AppendInt(pol, int64(l.Window()/time.Second), 10))
		}
	}
	if code == rlsv3.RateLimitResponse_OVER_LIMIT && !p.blocked && d.RetryAfter != sluice.Never {
		add("Retry-After", strconv.AppendInt(nil, max(1, ceilSeconds(d.RetryAfter)), 10))
	}
	return out
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
