package envoy

import (
	"math"
	"slices"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice"
)

// Result is what one ShouldRateLimit call decided, for observers.
type Result struct {
	// Domain is the request's domain: its first MaxDomainBytes bytes when
	// it is longer (such a request is refused, InvalidArgument).
	Domain string
	// Allowed is the overall code: true for OK, false for OVER_LIMIT.
	Allowed bool
	// Descriptors holds one Outcome per descriptor of the request, in order.
	Descriptors []Outcome
	// Now is when the request was decided, by the Service's clock.
	Now time.Time
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
	// limit applied, or when the descriptor gave units back
	// (is_negative_hits), which decides nothing. In a refused request a limit that would have admitted
	// it reports "allowed", though it consumed nothing.
	Result string
	// Remaining is the units the limit still holds after the decision, as
	// limit_remaining says (0 when it is over; for one of identical
	// descriptors, after it and the ones before it), and Capacity the most it
	// can hold (sluice.Limit.Burst); both 0 for blocked (requests_per_unit
	// 0), unlimited and unmatched descriptors.
	Remaining, Capacity int64
	// Subject names what the limit counted: the descriptor's store key,
	// "envoy:<domain>:<key>=<value>|…" (see Rules), without the suffix that
	// changes with each window of a week's, month's or year's rule, or
	// "envoy:sha256:<hex>" for a descriptor too long to be a key; "" when
	// no limit was checked (blocked, unlimited and unmatched descriptors).
	Subject string
	// Fixed reports a fixed window (envoyproxy/ratelimit's own algorithm).
	// Window is the rule's unit times its multiplier (a month is 30 days,
	// a year 365), and ResetAfter the time until the limit is whole again
	// (a fixed window's end), as duration_until_reset says; both 0 when no
	// limit was checked.
	Fixed              bool
	Window, ResetAfter time.Duration
	// Unavailable reports that no store decided the limit's check: its
	// sluice.Status was Unavailable (a failover's allow or deny while its
	// store cannot be reached), so Remaining tells no state and a refusal
	// ("limited") is the service's capacity, not the limit's. It reports a
	// sluice.Status.Undecided too (an over-limit cache refused the request
	// by another limit without asking the store, and the peek that reads
	// this one failed), never "limited". The response then tells no
	// remaining of the limit: its status has no limit_remaining, and a
	// duration_until_reset only for a fixed window counted in its Unix
	// window (whose end is the clock's), and the RateLimit headers state
	// its policy alone.
	Unavailable bool
	// NoRoom reports that the store refused the limit's check for want of
	// room to keep its state: its sluice.Status was NoRoom (a memory store
	// under memory.WithMaxKeys full of states it may not evict), so nothing
	// was counted, Remaining (0) tells no use of the limit, and the refusal
	// ("limited") is the store's capacity, not the limit's.
	NoRoom bool
}

// Outcome results.
const (
	resultAllowed   = "allowed"
	resultLimited   = "limited"
	resultShadow    = "shadow"
	resultUnlimited = "unlimited"
)

// responseParts is the memory of one response: the message, its statuses
// and their limits and durations, and its headers, allocated together —
// for a request of one descriptor in a single allocation — instead of
// four to six allocations per descriptor. gRPC marshals the response after
// the handler returns, so it is never pooled.
type responseParts struct {
	resp      rlsv3.RateLimitResponse
	ptrs      []*rlsv3.RateLimitResponse_DescriptorStatus
	statuses  []rlsv3.RateLimitResponse_DescriptorStatus
	limits    []rlsv3.RateLimitResponse_RateLimit
	durations []durationpb.Duration
	headers   []*corev3.HeaderValue
	values    []corev3.HeaderValue

	// Inline storage for a request of one descriptor, and for the headers
	// of the default mode (IETF: two, and Retry-After).
	ptr1      [1]*rlsv3.RateLimitResponse_DescriptorStatus
	status1   [1]rlsv3.RateLimitResponse_DescriptorStatus
	limit1    [1]rlsv3.RateLimitResponse_RateLimit
	duration1 [1]durationpb.Duration
	header5   [maxHeaders]*corev3.HeaderValue
	value5    [maxHeaders]corev3.HeaderValue
}

// maxHeaders is the most response_headers_to_add that the inline storage
// holds; more (draft-6's) are appended to a slice of their own.
const maxHeaders = 3

func newResponseParts(n int) *responseParts {
	r := new(responseParts)
	if n == 1 {
		r.ptrs, r.statuses, r.limits, r.durations = r.ptr1[:], r.status1[:], r.limit1[:], r.duration1[:]
	} else {
		r.ptrs = make([]*rlsv3.RateLimitResponse_DescriptorStatus, n)
		r.statuses = make([]rlsv3.RateLimitResponse_DescriptorStatus, n)
		r.limits = make([]rlsv3.RateLimitResponse_RateLimit, n)
		r.durations = make([]durationpb.Duration, n)
	}
	r.headers, r.values = r.header5[:0], r.value5[:0]
	return r
}

// addHeader appends a header to the response's headers. (When values
// outgrows its array, the headers added before keep pointing into the old
// one, which holds them unchanged.)
func (r *responseParts) addHeader(key, value string) {
	r.values = append(r.values, corev3.HeaderValue{Key: key, Value: value})
	r.headers = append(r.headers, &r.values[len(r.values)-1])
}

// response builds the RLS response of p decided as d in parts. A status
// that no store decided (see Outcome.Unavailable), or that the store
// refused for want of room (Outcome.NoRoom), keeps its code and
// current_limit, but has no limit_remaining, and a duration_until_reset
// only where the clock alone tells it: the end of a fixed window counted
// in its Unix window.
func (p *plan) response(d *sluice.Decision, parts *responseParts) *rlsv3.RateLimitResponse {
	resp := &parts.resp
	resp.OverallCode = rlsv3.RateLimitResponse_OK
	resp.Statuses = parts.ptrs
	if p.blocked || len(p.checks) > 0 && !d.Allowed {
		resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
	}
	for _, s := range p.slots {
		if s.over >= 0 && !s.rule.shadow && p.refused(s, d) {
			resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
		}
	}
	for i, s := range p.slots {
		st := &parts.statuses[i]
		st.Code = rlsv3.RateLimitResponse_OK
		resp.Statuses[i] = st
		switch r := s.rule; {
		case r == nil:
		case r.unlimited:
			st.LimitRemaining = math.MaxUint32
		case s.negative && !r.blocked:
			st.CurrentLimit = r.currentLimit(&parts.limits[i])
			if !s.peek.Unavailable {
				st.LimitRemaining = uint32(min(s.left, math.MaxUint32))
			}
			if !s.peek.Unavailable || s.aligned {
				st.DurationUntilReset = setDuration(&parts.durations[i], p.reset(s, &s.peek))
			}
		case r.blocked:
			hit := p.hit(s, d)
			st.CurrentLimit = r.currentLimit(&parts.limits[i])
			if !hit || !r.quota {
				st.DurationUntilReset = setDuration(&parts.durations[i], windowReset(p.unix, r.unitSeconds))
			}
			if hit && !r.shadow {
				st.Code = rlsv3.RateLimitResponse_OVER_LIMIT
			}
		default:
			c := &d.Statuses[s.check]
			refused, rem := p.occurrence(s, d, resp.OverallCode == rlsv3.RateLimitResponse_OK)
			st.CurrentLimit = r.currentLimit(&parts.limits[i])
			if !refused && !unmeasured(c) {
				st.LimitRemaining = uint32(min(rem, math.MaxUint32))
			}
			if (!refused || !r.quota) && (!unmeasured(c) || s.aligned) {
				st.DurationUntilReset = setDuration(&parts.durations[i], p.reset(s, c))
			}
			if refused && !r.shadow {
				st.Code = rlsv3.RateLimitResponse_OVER_LIMIT
			}
		}
	}
	return resp
}

// unmeasured reports whether c's Remaining and ResetAfter measure nothing
// of its key's use: no store decided it (sluice.Status.Unavailable,
// sluice.Status.Undecided), or the store refused it for want of room
// (sluice.Status.NoRoom), counting nothing.
func unmeasured(c *sluice.Status) bool { return c.Unavailable || c.NoRoom || c.Undecided }

// occurrence is the status of slot s, which has a check, among the
// identical descriptors of its request, which share the check: whether it
// is over its limit and, if not, what remains of its own limit after it.
// envoyproxy/ratelimit counts identical descriptors one after the other,
// each against its own limit (see bind), so in a fixed window those that
// fit what was left before the request, with the costs of the ones before
// them, are OK, each reporting what remained after it and the ones before
// it, and the others OVER_LIMIT; in a refused request what is not over
// reports what was left, uncharged. charged tells that the request was
// admitted. Other algorithms give every one of them the check's status, and
// so does a check refused for want of room (sluice.Status.NoRoom), which
// counted nothing: every descriptor sharing it is over, whatever its own
// quantity.
func (p *plan) occurrence(s slot, d *sluice.Decision, charged bool) (bool, int64) {
	c := &d.Statuses[s.check]
	if !p.refused(s, d) {
		if charged {
			return false, c.Remaining + s.later + p.offset(s)
		}
		return false, c.Remaining + p.offset(s)
	}
	total := p.checks[s.check].Cost
	if !s.rule.fixed || c.Allowed || c.NoRoom || s.check >= len(p.left) {
		return true, 0
	}
	if done, left := total-s.later, p.left[s.check]+p.offset(s); done <= left {
		return false, left - done
	}
	return true, 0
}

// reset is the duration_until_reset of slot s decided as c: for a fixed
// window counted in its Unix window, envoyproxy/ratelimit's (the whole
// seconds to that window's end); for one counted in sluice's windows, the
// whole seconds to its end (at least 1); otherwise the time until the limit is
// full again, and when refused at least the wait after which it admits
// the request (or, if none can, the rule's unit), so that an OVER_LIMIT
// status never says 0.
func (p *plan) reset(s slot, c *sluice.Status) time.Duration {
	switch {
	case s.aligned:
		return windowReset(p.unix, s.rule.unitSeconds)
	case s.rule.fixed:
		// A year counted in sluice's own windows: still in whole seconds,
		// as envoyproxy/ratelimit's durations are.
		return max(time.Duration(ceilSeconds(c.ResetAfter))*time.Second, time.Second)
	}
	d := c.ResetAfter
	if !c.Allowed {
		if c.RetryAfter != sluice.Never {
			d = max(d, c.RetryAfter)
		}
		if d == 0 {
			d = time.Duration(s.rule.unitSeconds) * time.Second
		}
	}
	return d
}

// retryAfter is the wait after which every refused enforcing check of p
// admits the request if nothing else arrives (as d.RetryAfter, with the
// Unix windows' ends for the fixed windows counted in them, but for a
// refusal no store decided, whose wait is when the store is asked again,
// and one for want of room (sluice.Status.NoRoom), whose wait is when room
// may be found); sluice.Never if no wait can.
func (p *plan) retryAfter(d *sluice.Decision) time.Duration {
	var wait time.Duration
	for _, s := range p.slots {
		if s.rule != nil && s.rule.blocked && !s.rule.shadow && p.hit(s, d) {
			return sluice.Never // a block list: no wait admits it
		}
		if s.check < 0 || s.rule.shadow {
			continue
		}
		c := &d.Statuses[s.check]
		switch {
		case !p.refused(s, d):
		case c.RetryAfter == sluice.Never:
			return sluice.Never
		case s.aligned && !c.Unavailable && !c.NoRoom:
			wait = max(wait, windowReset(p.unix, s.rule.unitSeconds))
		default:
			wait = max(wait, c.RetryAfter)
		}
	}
	return wait
}

// setDuration sets dst to d as durationpb.New does and returns it.
func setDuration(dst *durationpb.Duration, d time.Duration) *durationpb.Duration {
	nanos := d.Nanoseconds()
	secs := nanos / 1e9
	dst.Seconds, dst.Nanos = secs, int32(nanos-secs*1e9)
	return dst
}

// fill records the outcome of p for observers.
func (res *Result) fill(p *plan, d *sluice.Decision, resp *rlsv3.RateLimitResponse) {
	res.Allowed = resp.OverallCode == rlsv3.RateLimitResponse_OK
	res.Descriptors = slices.Grow(res.Descriptors[:0], len(p.slots))[:len(p.slots)]
	clear(res.Descriptors)
	for i, s := range p.slots {
		o := &res.Descriptors[i]
		switch r := s.rule; {
		case r == nil:
		case r.unlimited:
			o.Limit, o.Result = r.label, resultUnlimited
		case s.negative: // a give-back decides nothing
			o.Limit = r.label
			if !r.blocked {
				o.Remaining, o.Capacity = s.left, r.limit.Burst()
				o.Subject, o.Fixed = s.subject, r.fixed
				o.Window, o.ResetAfter = time.Duration(r.unitSeconds)*time.Second, p.reset(s, &s.peek)
				o.Unavailable = s.peek.Unavailable
			}
		case r.blocked:
			o.Limit, o.Result = r.label, resultAllowed
			switch {
			case !p.hit(s, d):
			case r.shadow:
				o.Result = resultShadow
			default:
				o.Result = resultLimited
			}
		default:
			refused, remaining := p.occurrence(s, d, res.Allowed)
			o.Limit, o.Remaining, o.Capacity = r.label, remaining, r.limit.Burst()
			o.Subject, o.Fixed = s.subject, r.fixed
			o.Window, o.ResetAfter = time.Duration(r.unitSeconds)*time.Second, p.reset(s, &d.Statuses[s.check])
			c := &d.Statuses[s.check]
			o.Unavailable, o.NoRoom = c.Unavailable || c.Undecided, c.NoRoom
			switch {
			case !refused:
				o.Result = resultAllowed
			case r.shadow:
				o.Result = resultShadow
			default:
				o.Result = resultLimited
			}
		}
	}
}
