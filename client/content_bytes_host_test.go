package client

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// uploads is an answer of a server whose quota is q content bytes a day
// with r left, whole again after reset.
func uploads(at time.Time, q, r int, reset time.Duration) response {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"upload";q=`+strconv.Itoa(q)+`;w=86400;qu="content-bytes"`)
	h.Set("RateLimit", `"upload";r=`+strconv.Itoa(r)+`;t=`+strconv.Itoa(int(reset/time.Second)))
	resp := readResponse(h, at)
	resp.status = http.StatusOK
	return resp
}

// Content of unknown length costs the whole quota of content bytes: it
// waits while any of the quota is spent, but no longer than the quota's
// reset, after which it goes alone (a probe) whatever its size may be.
func TestContentOfUnknownLengthWaitsAResetAtMost(t *testing.T) {
	h := newHostStateCountingBytes(true, 0)
	tk, ok, _ := h.tryWith(1, 1, t0)
	if !ok {
		t.Fatal("the first request was not granted")
	}
	h.finish(tk, uploads(t0, 1000, 999, 2*time.Second))
	if _, ok, wake := h.tryWith(1, -1, t0); ok || !wake.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("content of unknown length, 999 of 1,000 bytes left: granted %v, wake %v; want a wait for the reset", ok, wake)
	}
	if _, ok, _ := h.tryWith(1, 0, t0); !ok {
		t.Fatal("a request without content was held by a quota of content bytes")
	}
	tk, ok, _ = h.tryWith(1, -1, t0.Add(2*time.Second))
	if !ok || tk.body == nil || !tk.body.probe {
		t.Fatalf("content of unknown length after the reset: granted %v; want it sent as the quota's probe", ok)
	}
}
