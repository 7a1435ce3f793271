package client_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// When a throttled response has both Retry-After and a RateLimit field,
// Retry-After takes precedence (draft-ietf-httpapi-ratelimit-headers: it
// MUST, and the reset MAY be ignored): a bucket that states its reset as
// the time to refill whole (t=120) but the next unit in a second
// (Retry-After: 1) is retried after the second, not refused for a wait
// of two minutes beyond MaxWait.
func TestRetryAfterTakesPrecedenceOverTheReset(t *testing.T) {
	var calls atomic.Int64
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		status := http.StatusOK
		if calls.Add(1) == 1 {
			status = http.StatusTooManyRequests
			h.Set("Retry-After", "1")
			h.Set("RateLimit-Policy", `"bucket";q=60;w=60`)
			h.Set("RateLimit", `"bucket";r=0;t=120`)
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	req, _ := http.NewRequest(http.MethodGet, "http://api.example/items", nil)
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
		t.Fatalf("status %d after %d attempts; want 200 after 2, the retry waiting Retry-After's 1 s", resp.StatusCode, calls.Load())
	}
	if took < 900*time.Millisecond || took > 5*time.Second {
		t.Errorf("the retry came after %v, want Retry-After's 1 s", took.Round(time.Millisecond))
	}
}
