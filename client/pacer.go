package client

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Pacer keeps a client within one server's quota by learning it from the
// server's answers, as Transport does for each host it calls: it is that
// learning for other protocols (grpclimit's client interceptors use one per
// connection). Wait before every call and finish each call with Done and
// what the server answered; the Pacer holds calls that might not fit the
// quota, paces them at the rate the quota comes back once its burst is
// spent, and holds every call after a refusal until the server's wait is
// over. Its calls have no content it counts: a quota of content bytes
// (RateLimit-Policy's qu="content-bytes") is ignored, neither counted nor
// waited for; a refusal under one holds calls for the server's wait, as
// every refusal does. docs/client.md describes the model and its
// guarantees.
//
// A Pacer is safe for concurrent use. The zero Pacer paces as
// NewPacer("", 0)'s does.
type Pacer struct {
	once    sync.Once // makes h for the zero Pacer
	h       *hostState
	name    string
	maxWait time.Duration
}

// NewPacer returns a Pacer of the server called name (which errors
// mention). maxWait is the longest one Wait may be held: a wait with a
// known end beyond it fails at once with ErrWaitTooLong. 0 means
// DefaultMaxWait; a negative value means no bound but the context's.
func NewPacer(name string, maxWait time.Duration) *Pacer {
	p := &Pacer{name: name, maxWait: maxWait}
	p.ready()
	return p
}

// ready makes the pacer's state and fills in its longest wait, once.
func (p *Pacer) ready() {
	p.once.Do(func() {
		p.h = newHostState(true, 0)
		p.maxWait = RetryPolicy{MaxWait: p.maxWait}.withDefaults().MaxWait
	})
}

// Wait blocks until a call of cost units may be sent (cost ≤ 0 counts as 0
// and is held only by a server's wait after a refusal; a cost above
// sluice.MaxQuantity counts as it) and returns its
// Send, which must be finished with Done exactly once (calls unanswered
// for a minute, none other having been answered meanwhile, count as
// failed: the Pacer probes again). It returns an error
// wrapping ErrWaitTooLong at once when the wait has a known end beyond the
// Pacer's longest wait or the context's deadline, or once it has waited
// that long when its end is not known (a wait for a concurrency quota's
// slot, held by a stream however long it lasts), and the context's error
// when it is done first.
func (p *Pacer) Wait(ctx context.Context, cost int64) (Send, error) {
	p.ready()
	var waited time.Duration
	cost = max(cost, 0)
	if err := p.h.waitHold(ctx, p.name, cost, 0, p.maxWait, &waited); err != nil {
		return Send{}, err
	}
	tk, _, err := p.h.acquire(ctx, p.name, cost, p.maxWait-waited)
	if err != nil {
		return Send{}, err
	}
	return Send{h: p.h, tk: tk, ended: new(atomic.Bool)}, nil
}

// Send is one call a Pacer let through.
type Send struct {
	h  *hostState
	tk ticket
	// ended: the call's end was recorded (see End).
	ended *atomic.Bool
}

// Done records the answer to the call. Unless the answer is Streaming (the
// call goes on), Failed or Aside (the server may be serving it still), the
// call has ended: a slot of a concurrency quota (RateLimit-Policy's
// qu="concurrent-requests") it held is back. An Aside answer ends the call
// as Cut does. Calling it on the zero Send does nothing.
func (s Send) Done(a Answer) {
	if s.h != nil {
		s.h.finish(s.tk, a.response())
		switch {
		case a.Failed || a.Streaming:
		case a.Aside:
			s.Cut()
		default:
			s.End()
		}
	}
}

// End records that the call has ended, after a Done whose answer was
// Streaming: the server is done with it (a stream read to its end, or
// ended by the server's status), and a slot of a concurrency quota it
// held is back. The end of a call is recorded once: End or Cut after a
// Done that recorded it, or after an End or a Cut, does nothing, as do
// End and Cut on the zero Send.
func (s Send) End() {
	if s.h != nil && s.ended.CompareAndSwap(false, true) {
		s.h.end(s.tk)
	}
}

// Cut records that the caller ended the call before the server was done
// with it, after a Done whose answer was Streaming: a stream cancelled,
// past its deadline, or broken on the client's side. The server may
// serve it still, and hold its slot of a concurrency quota until its
// handler returns, or may have given it back already: the slot is
// thought held until a call sent alone after the quota's reset learns
// the quota anew. The call's end is recorded once, as End says.
func (s Send) Cut() {
	if s.h != nil && s.ended.CompareAndSwap(false, true) {
		s.h.cutShort(s.tk)
	}
}

// Answer is what a server answered a call, as a Pacer learns from it.
type Answer struct {
	// Failed means that no answer arrived (the connection broke, the
	// context ended): the server may or may not have counted the call.
	Failed bool
	// Refused means the server refused the call for its quota: an HTTP 429,
	// a gRPC RESOURCE_EXHAUSTED.
	Refused bool
	// Unavailable means the server shed the call for its own sake (an HTTP
	// 503, a gRPC UNAVAILABLE): calls are held by its Retry-After only.
	Unavailable bool
	// Header holds the rate-limit fields of the answer, in any of the
	// four formats ParseRateLimit reads, and Retry-After.
	Header http.Header
	// RetryAfter, when positive, is the server's wait in a form other than
	// a Retry-After header (gRPC's RetryInfo); it replaces Retry-After.
	RetryAfter time.Duration
	// Streaming means the call goes on after this answer (a stream whose
	// header came with its first message): a slot of a concurrency quota
	// is held until Send.End, or until a probe after Send.Cut.
	Streaming bool
	// Aside means the answer came from the server's side but perhaps not
	// from its limiter: a status that its handler or a proxy in front of
	// it may have sent by itself (an upstream down or timed out), without
	// RateLimit fields. It tells nothing of the quota (its rate-limit
	// fields are ignored, as a cached answer's are), except to a Pacer
	// that has learned nothing yet: a server that answers without fields
	// states no limit. The call may hold its slot of a concurrency quota
	// still: it is held until a probe after the quota's reset, as after
	// Send.Cut. Failed or Streaming, when set too, wins.
	Aside bool
	// At is when the answer arrived; the zero time means now.
	At time.Time
}

func (a Answer) response() response {
	at := a.At
	if at.IsZero() {
		at = time.Now()
	}
	r := readResponse(a.Header, at)
	if a.Aside {
		r = response{at: at, cached: true, ra: r.ra, hasRA: r.hasRA}
	}
	r.arrived = !a.Failed
	switch {
	case a.Refused:
		r.status = http.StatusTooManyRequests
	case a.Unavailable:
		r.status = http.StatusServiceUnavailable
	default:
		r.status = http.StatusOK
	}
	if a.RetryAfter > 0 {
		r.ra, r.hasRA = clampHint(a.RetryAfter), true
	}
	return r
}

// readResponse is what the headers of a response, arrived at at, tell a
// host: every policy, the binding one of those not counting content bytes
// (policies of content bytes are kept apart, see response.ofBytes), the
// policies stated alone, and Retry-After. A response a cache
// served (see fromCache) tells Retry-After alone. The binding policy is
// one of those that come back with time: a concurrency policy binds only
// when the response states no other, as its slots come back as requests
// end, and it has no reset nor rate for the bounds to follow (see bound).
func readResponse(h http.Header, at time.Time) response {
	r := response{arrived: true, at: at}
	if h == nil {
		return r
	}
	r.cached = fromCache(h)
	if !r.cached {
		named := map[string]bool{}
		var slots RateLimit
		var hasSlots bool
		parseQuotas(h, at, func(q quota) {
			if q.Format != FormatIETF && q.Limit > 0 {
				q.Policy = unnamedPolicy(q.Limit)
			}
			named[q.Policy] = true
			switch {
			case q.bytes:
				r.bytes = append(r.bytes, q)
				return
			case q.inFlight:
				slots, hasSlots = binding(slots, hasSlots, q.RateLimit), true
			default:
				r.rl, r.hasRL = binding(r.rl, r.hasRL, q.RateLimit), true
			}
			r.quotas = append(r.quotas, q)
		})
		if !r.hasRL && hasSlots {
			r.rl, r.hasRL = slots, true
		}
		for _, p := range policiesAlone(h, named) {
			if p.bytes {
				r.bytesAlone = append(r.bytesAlone, p)
			} else {
				r.alone = append(r.alone, p)
			}
		}
	}
	r.ra, r.hasRA = ParseRetryAfter(h, at)
	return r
}

// unnamedPolicy is the name a host remembers a policy of the formats that
// name none (draft 7, draft 6, legacy) by: its limit, which tells apart the
// policies a server reports one at a time (the one nearest exhaustion), as
// no RateLimit-Policy name can (it holds a control character).
func unnamedPolicy(limit int64) string {
	return "\x00limit=" + strconv.FormatInt(limit, 10)
}

// unnamedLimit is the limit of a policy that unnamedPolicy names; ok is
// false for another name.
func unnamedLimit(name string) (limit int64, ok bool) {
	n, found := strings.CutPrefix(name, "\x00limit=")
	if !found {
		return 0, false
	}
	limit, err := strconv.ParseInt(n, 10, 64)
	return limit, err == nil
}

// fromCache reports whether h is the header of a response that a cache
// served from storage: its Age is above 0 (RFC 9111, section 5.1). Its
// rate-limit fields are then the origin's when the cache stored it, not
// the quota now, and draft-ietf-httpapi-ratelimit-headers says they
// SHOULD be ignored.
func fromCache(h http.Header) bool {
	age, ok := leadingInt(h.Get("Age"))
	return ok && age > 0
}
