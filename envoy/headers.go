package envoy

import (
	"math"
	"slices"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/quota"
)

// Header modes, spelled as httplimit.ModeIETF and httplimit.ModeDraft6.
const (
	modeIETF   = "ietf"
	modeDraft6 = "draft-6"
)

// The default names of draft-6's headers.
const (
	headerLimit     = "RateLimit-Limit"
	headerRemaining = "RateLimit-Remaining"
	headerReset     = "RateLimit-Reset"
)

// headerNames are the headers a Service adds: its mode ("" for none) and
// the names of draft-6's headers.
type headerNames struct {
	mode, limit, remaining, reset string
}

// headers returns the response_headers_to_add of p decided as d, in parts,
// named as names says.
func (p *plan) headers(names *headerNames, d *sluice.Decision, code rlsv3.RateLimitResponse_Code, parts *responseParts) []*corev3.HeaderValue {
	switch names.mode {
	case modeIETF:
		policy, state := p.policy[:0], p.state[:0]
		var onePolicy string // the policy of the only limit, without a copy
		p.seen = slices.Grow(p.seen[:0], len(p.checks))[:len(p.checks)]
		clear(p.seen)
		limits := 0
		for i, s := range p.slots {
			if !s.shown() || p.seen[s.check] || p.outranked(i, d) {
				continue
			}
			p.seen[s.check] = true
			if limits > 0 {
				policy = append(policy, ", "...)
			}
			limits++
			onePolicy = s.rule.policy
			policy = append(policy, s.rule.policy...)
			if p.unavailable(s, d) { // the policy alone: its figures are made up
				continue
			}
			if len(state) > 0 {
				state = append(state, ", "...)
			}
			state = append(state, '"')
			state = append(state, s.rule.label...)
			state = append(state, `";r=`...)
			state = strconv.AppendInt(state, p.remaining(s, d), 10)
			if s.rule.stated.W > 0 { // concurrency has no t
				state = append(state, ";t="...)
				state = strconv.AppendInt(state, p.headerT(s, d), 10)
			}
		}
		p.policy, p.state = policy, state
		if limits > 0 {
			if limits > 1 {
				onePolicy = string(policy)
			}
			parts.addHeader("RateLimit-Policy", onePolicy)
		}
		if len(state) > 0 { // else no limit a store decided: no field
			parts.addHeader("RateLimit", string(state))
		}
	case modeDraft6:
		if i, ok := p.described(parts.ptrs, d); ok {
			s, st := p.slots[i], parts.ptrs[i]
			q, w := int64(st.GetCurrentLimit().GetRequestsPerUnit()), s.rule.unitSeconds
			if !s.rule.fixed && !s.rule.blocked { // sluice's other algorithms: what their headers state
				q, w = s.rule.stated.Q, s.rule.stated.W
			}
			parts.addHeader(names.limit, strconv.FormatInt(q, 10))
			if !p.unavailable(s, d) { // else the limit alone: its figures are made up
				parts.addHeader(names.remaining, strconv.FormatUint(uint64(st.GetLimitRemaining()), 10))
				parts.addHeader(names.reset, strconv.FormatInt(p.draft6Reset(s, d), 10))
			}
			pol := strconv.AppendInt(p.policy[:0], q, 10)
			if w > 0 {
				pol = append(pol, ";w="...)
				pol = strconv.AppendInt(pol, w, 10)
			}
			p.policy = pol
			parts.addHeader("RateLimit-Policy", string(pol))
		}
	}
	if code == rlsv3.RateLimitResponse_OVER_LIMIT && !p.blocked {
		if wait := p.retryAfter(d); wait != sluice.Never {
			parts.addHeader("Retry-After", strconv.FormatInt(max(1, ceilSeconds(wait)), 10))
		}
	}
	if len(parts.headers) == 0 {
		return nil
	}
	return parts.headers
}

// described returns the index of the status (of p decided as d) that
// envoyproxy/ratelimit's RateLimit-* headers describe: the last one
// OVER_LIMIT, else the one with the least limit_remaining (the first of
// equals) among those with a current_limit, shadow and quota-mode ones
// (reported OK) included, and among those a store decided when any was
// (see unavailable); false when none has a current_limit.
func (p *plan) described(statuses []*rlsv3.RateLimitResponse_DescriptorStatus, d *sluice.Decision) (int, bool) {
	found, least, over, told := -1, uint32(math.MaxUint32), false, false
	for i, st := range statuses {
		t := !p.unavailable(p.slots[i], d)
		switch {
		case st.GetCode() == rlsv3.RateLimitResponse_OVER_LIMIT:
			found, over = i, true
		case over || st.GetCurrentLimit() == nil:
		case t && (!told || st.GetLimitRemaining() < least), !t && found < 0:
			found, least, told = i, st.GetLimitRemaining(), t
		}
	}
	return found, found >= 0
}

// unavailable reports whether no store measured slot s: the status of its
// check, or of a give-back's peek, is sluice.Status.Unavailable (a
// failover's allow or deny while its store cannot be reached), or its
// check's is sluice.Status.NoRoom (the store refused it for want of room,
// counting nothing) or sluice.Status.Undecided (an over-limit cache
// refused the request by another check, and the peek that reads this one
// failed), whose remaining and reset are made up. The headers tell no
// figure of it, only its limit.
func (p *plan) unavailable(s slot, d *sluice.Decision) bool {
	switch {
	case s.check >= 0:
		return unmeasured(&d.Statuses[s.check])
	case s.negative:
		return s.peek.Unavailable
	}
	return false
}

// draft6Reset is the RateLimit-Reset of slot s: envoyproxy/ratelimit's
// seconds to the end of the Unix window for a fixed window and a
// requests_per_unit 0 rule, the header's t otherwise (see headerT).
func (p *plan) draft6Reset(s slot, d *sluice.Decision) int64 {
	switch {
	case s.rule.blocked:
		return ceilSeconds(windowReset(p.unix, s.rule.unitSeconds))
	case s.negative:
		return ceilSeconds(p.reset(s, &s.peek))
	}
	return p.headerT(s, d)
}

// shown reports whether the IETF headers may tell slot s: it was checked
// and its rule is enforced (they never show a shadow limit).
func (s slot) shown() bool { return s.check >= 0 && !s.rule.shadow }

// outranked reports whether a rule of slot i's name (its label) limits
// another descriptor of p that is closer to refusing (less remaining; then
// a longer t; then the earlier): the IETF headers name a limit once, with
// the figures of its descriptor closest to refusing. Limit overrides of
// one window share a name, whatever their quantity, and identical
// descriptors of such overrides a check (see bind). Only slots the headers
// may show compete: a shadow rule named as an enforced one hides nothing.
// One that a store decided outranks one that no store did (see
// unavailable), whose figures are made up.
func (p *plan) outranked(i int, d *sluice.Decision) bool {
	s := p.slots[i]
	for j, o := range p.slots {
		if j == i || !o.shown() || o.rule.label != s.rule.label {
			continue
		}
		if uo, us := p.unavailable(o, d), p.unavailable(s, d); uo != us {
			if us {
				return true
			}
			continue
		}
		ro, rs := p.remaining(o, d), p.remaining(s, d)
		if ro != rs {
			if ro < rs {
				return true
			}
			continue
		}
		to, ts := p.headerT(o, d), p.headerT(s, d)
		if to > ts || to == ts && j < i {
			return true
		}
	}
	return false
}

// remaining is what slot s's limit holds after its request: 0 when it is
// over its limit, as envoyproxy/ratelimit answers.
func (p *plan) remaining(s slot, d *sluice.Decision) int64 {
	if p.refused(s, d) {
		return 0
	}
	return max(d.Statuses[s.check].Remaining+p.offset(s), 0)
}

// headerT is the t of slot s's RateLimit header: the seconds until more of
// its quota is available (see internal/quota). For envoyproxy/ratelimit's
// fixed windows that is the end of the Unix window, duration_until_reset.
// A slot over its limit, whose r is 0, never has a t of 0: a cost above
// what the limit can ever hold is refused with its limit full, and no wait
// helps; its t is then the header's w, the time an emptied limit takes to
// be full again, rather than a 0 that invites the request again at once.
func (p *plan) headerT(s slot, d *sluice.Decision) int64 {
	st := &d.Statuses[s.check]
	if s.rule.fixed {
		return ceilSeconds(p.reset(s, st))
	}
	t := s.rule.stated.Seconds(st.Remaining, st.ResetAfter, st.RetryAfter)
	if t == 0 && p.refused(s, d) {
		t = s.rule.stated.W
	}
	return t
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) int64 { return quota.CeilSeconds(d) }
