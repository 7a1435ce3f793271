package client

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// draft7 is an admitted answer at at whose draft-7 RateLimit reports one
// policy, which it cannot name: limit, remaining and reset (in seconds).
func draft7(at time.Time, limit, remaining, reset int64) response {
	h := http.Header{}
	h.Set("RateLimit", fmt.Sprintf("limit=%d, remaining=%d, reset=%d", limit, remaining, reset))
	r := readResponse(h, at)
	r.status = http.StatusOK
	return r
}

// A server of two policies that reports in draft 7's form the one nearest
// exhaustion names neither: what one answer says remains of the policy of
// 12 does not raise what another said of the policy of 4, which holds the
// host until its own reset.
func TestDraft7ReportsOfPoliciesOfDifferentLimitsAreKeptApart(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "probe")
	h.finish(probe, draft7(t0.Add(10*time.Millisecond), 12, 1, 2))
	now := t0.Add(20 * time.Millisecond)
	second := mustGrant(t, h, now, "second, within the 1 left of the policy of 12")
	h.finish(second, draft7(now.Add(10*time.Millisecond), 4, 3, 1))
	// The policy of 4 has 3 left, but the policy of 12 has none until its
	// reset, 2 s after the probe's answer.
	mustWait(t, h, now.Add(20*time.Millisecond), t0.Add(10*time.Millisecond+2*time.Second), "third")
}

// A policy whose w no answer states, once past its reset, may have given
// back as little as one unit (a sliding log's): while the answers report
// only another policy, requests go one at a time, each after the last is
// answered, until an answer reports it again.
func TestAPolicyOfUnknownWindowIsSentOneAtATimeAfterItsReset(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "probe")
	h.finish(probe, draft7(t0.Add(10*time.Millisecond), 12, 1, 2))
	second := mustGrant(t, h, t0.Add(20*time.Millisecond), "second")
	h.finish(second, draft7(t0.Add(30*time.Millisecond), 4, 3, 1))
	now := t0.Add(2100 * time.Millisecond) // past both resets
	third := mustGrant(t, h, now, "third, alone after the reset")
	mustWait(t, h, now, time.Time{}, "fourth, while the third is in flight")
	h.finish(third, draft7(now.Add(10*time.Millisecond), 4, 3, 1))
	fourth := mustGrant(t, h, now.Add(20*time.Millisecond), "fourth, the third answered")
	mustWait(t, h, now.Add(20*time.Millisecond), time.Time{}, "fifth, while the fourth is in flight")
	h.finish(fourth, draft7(now.Add(30*time.Millisecond), 12, 5, 9))
	// Reported again, with 5 left: two go together, as the policy of 4
	// allows.
	for i := range 2 {
		mustGrant(t, h, now.Add(40*time.Millisecond), fmt.Sprint("request ", 5+i, " with the policy reported again"))
	}
}
