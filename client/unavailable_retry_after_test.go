package client_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// globalRefusal is the header of sluice's own 503 under global_status:
// 503: the next unit in a second (Retry-After), the quota whole in two
// minutes (the RateLimit field's reset).
func globalRefusal() http.Header {
	h := http.Header{}
	h.Set("Retry-After", "1")
	h.Set("RateLimit-Policy", `"global";q=60;w=60`)
	h.Set("RateLimit", `"global";r=0;t=120`)
	return h
}

// A 503's Retry-After takes precedence over the reset of the RateLimit
// fields beside it, as a 429's does: the retry comes after Retry-After's
// second, not refused for a wait of two minutes beyond MaxWait.
func TestRetryAfterOfA503TakesPrecedenceOverTheReset(t *testing.T) {
	var calls atomic.Int64
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		status := http.StatusOK
		if calls.Add(1) == 1 {
			status, h = http.StatusServiceUnavailable, globalRefusal()
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/items", nil)
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("%v after %d attempts, %v; want 200 after the 503's Retry-After of 1 s", err, calls.Load(), time.Since(start).Round(time.Millisecond))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
		t.Fatalf("status %d after %d attempts; want 200 after 2", resp.StatusCode, calls.Load())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the retry came after %v, want Retry-After's 1 s", took.Round(time.Millisecond))
	}
}

// Answer.Unavailable: "calls are held by its Retry-After only". A 503
// whose Retry-After (1 s) has passed holds no call, whatever reset the
// RateLimit field beside it states, and whatever reset an earlier answer
// reported of the same policy.
func TestAnUnavailableAnswerHoldsByItsRetryAfterOnly(t *testing.T) {
	t.Run("the reset beside it", func(t *testing.T) {
		p := client.NewPacer("api", time.Minute)
		s := letThrough(t, p)
		// Answered 2 s ago: its Retry-After of 1 s is over.
		s.Done(client.Answer{Unavailable: true, Header: globalRefusal(), At: time.Now().Add(-2 * time.Second)})
		letThrough(t, p)
	})
	t.Run("an earlier answer's reset", func(t *testing.T) {
		p := client.NewPacer("api", time.Minute)
		first := letThrough(t, p)
		admitted := http.Header{}
		admitted.Set("RateLimit-Policy", `"global";q=60;w=60`)
		admitted.Set("RateLimit", `"global";r=1;t=100`)
		first.Done(client.Answer{Header: admitted, At: time.Now().Add(-3 * time.Second)})
		second := letThrough(t, p)
		second.Done(client.Answer{Unavailable: true, Header: globalRefusal(), At: time.Now().Add(-2 * time.Second)})
		letThrough(t, p)
	})
}

// letThrough returns the Send of a call of cost 1 that p lets through
// within a second.
func letThrough(t *testing.T, p *client.Pacer) client.Send {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s, err := p.Wait(ctx, 1)
	if err != nil {
		t.Fatalf("a call after the 503's Retry-After: %v; want it let through", err)
	}
	return s
}
