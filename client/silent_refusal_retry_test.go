package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// refusingOnce answers the first request 429 with header h, every other
// one 200, counting them in calls.
func refusingOnce(h http.Header, calls *atomic.Int64) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		status, header := http.StatusOK, http.Header{}
		if calls.Add(1) == 1 {
			status, header = http.StatusTooManyRequests, h
		}
		return &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})
}

// A 429 that says nothing (no Retry-After, no RateLimit fields) is retried
// after the backoff, a wait drawn from [0, min(BackoffCap,
// BackoffBase·2^retry)], and holds its host no longer: with a cap of 1 ms
// the retry comes within milliseconds, not after a second.
func TestA429ThatSaysNothingIsRetriedAfterTheBackoff(t *testing.T) {
	var calls atomic.Int64
	tr := &client.Transport{
		Retry: client.RetryPolicy{BackoffBase: time.Millisecond, BackoffCap: time.Millisecond},
		Base:  refusingOnce(http.Header{}, &calls),
	}
	req, _ := http.NewRequest(http.MethodGet, "http://api.example/items", nil)
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusOK || took > 500*time.Millisecond {
		t.Errorf("status %d after %v (%d attempts); want 200 after a backoff of at most 1 ms (plus the drain)", resp.StatusCode, took.Round(time.Millisecond), calls.Load())
	}
}

// A 429 that says nothing holds its host for the backoff of its retry
// alone, so that a retry within the context's deadline is made: with a
// backoff of at most 1 ms and a deadline of 500 ms, RoundTrip returns the
// retry's 200, not an error for a hold of a second.
func TestA429ThatSaysNothingHoldsItsHostOnlyForTheBackoff(t *testing.T) {
	var calls atomic.Int64
	tr := &client.Transport{
		Retry: client.RetryPolicy{BackoffBase: time.Millisecond, BackoffCap: time.Millisecond},
		Base:  refusingOnce(http.Header{}, &calls),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/items", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("%v after %d attempts; want the retry's 200", err, calls.Load())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
		t.Errorf("status %d after %d attempts; want 200 after 2", resp.StatusCode, calls.Load())
	}
}

// The wait before a retry is the longer of the server's and the host's
// own hold on the request: a 429 whose binding policy is back in a second
// may leave another policy with too little for the request until a later
// reset. When that hold passes Retry.MaxWait or the context's deadline,
// the retry is not begun: RoundTrip returns the 429 as it came, at once,
// not an error after the server's second.
func TestARetryHeldPastItsBoundsByAnotherPolicyReturnsThe429(t *testing.T) {
	for _, c := range []struct {
		name     string
		day      string // the RateLimit item of the policy that holds the retry
		deadline time.Duration
	}{
		{"held past MaxWait, a minute", `"day";r=4;t=80000`, 10 * time.Second},
		{"held past the context's deadline", `"day";r=4;t=30`, 10 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			h.Add("RateLimit", `"sec";r=3;t=1`)
			h.Add("RateLimit", c.day)
			var calls atomic.Int64
			tr := &client.Transport{
				Base: refusingOnce(h, &calls),
				Cost: func(*http.Request) int64 { return 5 },
			}
			ctx, cancel := context.WithTimeout(context.Background(), c.deadline)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/items", nil)
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("%v after %d attempts (ErrWaitTooLong: %t); want the 429 as it came", err, calls.Load(), errors.Is(err, client.ErrWaitTooLong))
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusTooManyRequests || calls.Load() != 1 {
				t.Errorf("status %d after %d attempts; want the 429 of the first", resp.StatusCode, calls.Load())
			}
			if took := time.Since(start); took > 500*time.Millisecond {
				t.Errorf("the 429 came back after %v, want at once", took.Round(time.Millisecond))
			}
		})
	}
}
