package client

import (
	"net/http"
	"testing"
	"time"
)

func TestAPolicyStatedWithoutRemainingLimitsWhatIsSentInItsWindow(t *testing.T) {
	h := newHostState(true, 0)
	hdr := http.Header{}
	hdr.Set("RateLimit-Policy", `"per-minute";q=3;w=60`)
	h.finish(mustGrant(t, h, t0, "probe"), readResponse(hdr, t0))
	mustGrant(t, h, t0.Add(time.Second), "second of 3 a minute")
	mustGrant(t, h, t0.Add(2*time.Second), "third of 3 a minute")
	_, ok, wake := h.try(1, t0.Add(3*time.Second))
	if ok {
		t.Fatal("a fourth request went within the minute, past the 3 a minute the policy states")
	}
	// The first went at t0: its unit leaves the window a minute later, up
	// to a 64th of the window late.
	if wake.Before(t0.Add(time.Minute)) || wake.After(t0.Add(time.Minute+time.Minute/64+time.Millisecond)) {
		t.Fatalf("wake %v; want a minute after the first, a 64th of it late at most", wake)
	}
	mustGrant(t, h, wake, "a fourth when the first has left the window")
	if _, ok, _ := h.try(1, wake); ok {
		t.Error("a fifth went with the fourth, 4 within the minute")
	}
}
