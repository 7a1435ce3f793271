package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A throttled response whose body never ends must not keep its request
// from being retried once the server's wait is over.
func TestAThrottledBodyThatNeverEndsDoesNotHoldTheRetry(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte("slow"))
		w.(http.Flusher).Flush()
		select { // the rest of the body never comes
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &client.Transport{Base: base}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("after %v: %v, want the retry's 200", time.Since(start).Round(time.Millisecond), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the retry came after %v, want about the Retry-After of 1s", d.Round(time.Millisecond))
	}
}
