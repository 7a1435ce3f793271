package client

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// inFlight is an answer of a server whose quota is a concurrency limit of
// q (RateLimit-Policy's qu="concurrent-requests", as sluice states one)
// with r slots free once it admitted the request.
func inFlight(at time.Time, q, r int) response {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"in-flight";q=`+strconv.Itoa(q)+`;qu="concurrent-requests"`)
	h.Set("RateLimit", `"in-flight";r=`+strconv.Itoa(r))
	resp := readResponse(h, at)
	resp.status = http.StatusOK
	return resp
}

// A concurrency quota's slot comes back when its request ends, not with
// time: every request ended since a response frees a slot it counted. A
// client whose probe was told one slot of two is free may then keep two
// requests in flight once the probe has ended; without it, a host with a
// concurrency limit of q kept about one request in flight whatever q (174
// calls of 50 ms in 3 s against 10 slots, where 600 fit). A request ends
// when its answer is read whole, not when its header arrives: a server
// holds the slot while it writes the body.
func TestAConcurrencyQuotaFreesASlotWithEachRequestEnded(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "probe")
	h.finish(probe, inFlight(t0, 2, 1))
	b := mustGrant(t, h, t0, "second, with the probe answered")
	mustWait(t, h, t0, t0.Add(defaultReset), "third, the probe's answer still being read")
	h.end(probe)
	mustGrant(t, h, t0, "third, two in flight of two slots")
	mustWait(t, h, t0, t0.Add(defaultReset), "fourth, all slots taken")
	h.finish(b, inFlight(t0, 2, 0))
	mustWait(t, h, t0, t0.Add(defaultReset), "fourth, the second's answer still being read")
	h.end(b)
	mustGrant(t, h, t0, "fourth, once a request in flight has ended")
}
