package client

import (
	"fmt"
	"net/http"
	"time"

	"github.com/sluice-dev/sluice"
)

// Quotas of content bytes (RateLimit-Policy's qu="content-bytes") count
// the bytes of the content that requests send, not the requests. A host
// whose Transport counts them keeps a second hostState, its body, learned
// from those quotas alone as the host's own state is from the others:
// each request spends its cost in the one and its content's bytes in the
// other, granted in both at once or in neither.

// newHostStateCountingBytes is newHostState with a body state: the host
// counts the bytes of request content against its quotas of content
// bytes, as Transport does.
func newHostStateCountingBytes(learn bool, stall time.Duration) *hostState {
	h := newHostState(learn, stall)
	h.body = newHostState(learn, stall)
	h.body.stated = true
	return h
}

// contentCost is what content of bytes costs a quota of content bytes:
// bytes, or when they are unknown (-1, a body streamed without a
// length), the whole quota, which they may fill (the least q a policy
// stated, alone or not, or the most seen available when no quota was
// stated, 1 before any): such a request is sent only when the quota is
// whole, or alone after its reset, and so waits a reset at most. h.mu is
// held.
func (h *hostState) contentCost(bytes int64) int64 {
	if bytes >= 0 {
		return min(bytes, sluice.MaxQuantity)
	}
	whole := h.whole
	if q := h.windowsWhole(); q > 0 && (whole <= 0 || q < whole) {
		whole = q
	}
	if whole > 0 {
		return whole
	}
	return max(h.capacity, 1)
}

// windowsWhole is the least q of the policies whose q and w an answer
// stated (see window), or 0 when there is none. h.mu is held.
func (h *hostState) windowsWhole() int64 {
	var q int64
	for i := range h.policies {
		if w := h.policies[i].win; w != nil && (q == 0 || w.q < q) {
			q = w.q
		}
	}
	return q
}

// tooLarge reports, as an error wrapping ErrExceedsBurst, content of
// bytes larger than the whole of a quota of content bytes the host
// stated, alone or with what remains of it: no wait can admit it. It is nil for content of unknown length,
// and when the host counts no content bytes, or does not learn. h.mu is
// held.
func (h *hostState) tooLarge(bytes int64, host string) error {
	if h.body == nil {
		return nil
	}
	h.body.mu.Lock()
	defer h.body.mu.Unlock()
	b := h.body
	whole, policy := b.whole, b.wholePolicy
	for i := range b.policies {
		if w := b.policies[i].win; w != nil && (whole <= 0 || w.q < whole) {
			whole, policy = w.q, w.name
		}
	}
	if !b.learn || whole <= 0 || bytes <= whole {
		return nil
	}
	return fmt.Errorf("%w: a body of %d bytes is larger than the whole quota of %s's policy %q, %d content bytes: send it in parts",
		ErrExceedsBurst, bytes, host, policy, whole)
}

// tryWith is try for a request whose content is bytes long (-1: unknown):
// it is granted when both its cost fits the host's quotas and its bytes
// fit those of h.body, the host's quotas of content bytes, if it counts
// them. h.mu is held.
func (h *hostState) tryWith(cost, bytes int64, now time.Time) (tk ticket, ok bool, wake time.Time) {
	tk, ok, wake, _ = h.tryContent(cost, bytes, now)
	return tk, ok, wake
}

// tryContent is tryWith, which also reports whether a wait is for the
// quotas of content bytes alone (byBody): the host's others have room.
func (h *hostState) tryContent(cost, bytes int64, now time.Time) (tk ticket, ok bool, wake time.Time, byBody bool) {
	how, wake := h.admits(cost, now)
	if how == sendHeld {
		return tk, false, wake, false
	}
	if h.body == nil {
		return h.grant(cost, how, now), true, wake, false
	}
	h.body.mu.Lock()
	defer h.body.mu.Unlock()
	bytes = h.body.contentCost(bytes)
	bodyHow, wake := h.body.admits(bytes, now)
	if bodyHow == sendHeld {
		return tk, false, wake, true
	}
	bodyTk := h.body.grant(bytes, bodyHow, now)
	tk = h.grant(cost, how, now)
	tk.body = &bodyTk
	return tk, true, wake, false
}

// ofBytes is r as a host's body state reads it: its policies of content
// bytes, the one of them that binds, and those stated alone.
func (r response) ofBytes() response {
	b := r
	b.quotas, b.bytes, b.rl, b.hasRL = r.bytes, nil, RateLimit{}, false
	b.alone, b.bytesAlone = r.bytesAlone, nil
	for _, q := range r.bytes {
		b.rl, b.hasRL = binding(b.rl, b.hasRL, q.RateLimit), true
	}
	return b
}

// state records the least quota that r's policies state, when they state
// one (see whole). h.mu is held.
func (h *hostState) state(r response) {
	var whole int64
	var policy string
	for _, q := range r.quotas {
		if q.Limit > 0 && (whole == 0 || q.Limit < whole) {
			whole, policy = q.Limit, q.Policy
		}
	}
	if whole > 0 {
		h.whole, h.wholePolicy = whole, policy
	}
}

// contentLength is the length of req's body, as a quota of content bytes
// counts it: 0 without a body, -1 when unknown (a body streamed without a
// length; net/http also reads a ContentLength of 0 with a body so).
func contentLength(req *http.Request) int64 {
	switch {
	case req.Body == nil || req.Body == http.NoBody:
		return 0
	case req.ContentLength > 0:
		return req.ContentLength
	}
	return -1
}
