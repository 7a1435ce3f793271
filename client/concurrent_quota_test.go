package client

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
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

// A response's body read to its end has ended its request, closed or not
// yet: the server has written the whole answer, and its slot is back.
func TestABodyReadToItsEndGivesItsSlotBack(t *testing.T) {
	tr := &Transport{Base: roundTripper(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("RateLimit-Policy", `"in-flight";q=1;qu="concurrent-requests"`)
		h.Set("RateLimit", `"in-flight";r=0`)
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("answer")), Request: r}, nil
	})}
	req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	next, err := tr.RoundTrip(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("the next request, the only slot's holder read to its end: %v; want it sent", err)
	}
	next.Body.Close()
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// docs/client.md: "Hosts that send no headers are not held at all, and
// neither is a host that stops sending them." A host bound by a
// concurrency quota alone sends no probe (its slots come back as requests
// end, not at a reset): an admitted answer without fields to a request
// sent after the last answer that stated the quota opens it, as a probe's
// answer would. One to a request sent before that answer arrived may
// come from before the server stated the quota: it changes nothing.
func TestAnAnswerWithoutFieldsOpensAHostBoundBySlotsAlone(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "probe")
	h.finish(probe, inFlight(t0, 2, 1))
	h.end(probe)
	a := mustGrant(t, h, t0, "first of two slots")
	b := mustGrant(t, h, t0, "second of two slots")
	h.finish(b, inFlight(t0.Add(time.Millisecond), 2, 0))
	h.finish(a, response{arrived: true, at: t0.Add(2 * time.Millisecond), status: http.StatusOK})
	if h.mode != modeKnown {
		t.Fatalf("an answer without fields to a request sent before the last answer stating the quota: mode %d; want the quota kept (%d)", h.mode, modeKnown)
	}
	mustWait(t, h, t0.Add(2*time.Millisecond), t0.Add(time.Millisecond+defaultReset), "a third, both slots held")
	h.end(a)
	h.end(b)
	sent := t0.Add(3 * time.Millisecond)
	c := mustGrant(t, h, sent, "once both have ended")
	h.finish(c, response{arrived: true, at: sent.Add(time.Millisecond), status: http.StatusOK})
	for i := range 5 {
		mustGrant(t, h, sent.Add(time.Millisecond), "after an answer without fields to a request sent since the last that stated the quota, request "+strconv.Itoa(i))
	}
}
