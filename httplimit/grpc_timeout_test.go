package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A gRPC call states its deadline in its grpc-timeout header, as a gRPC
// server reads it: a call whose turn in a leaky-bucket queue comes after
// that deadline is refused at once (429 with the problem, which sluice
// serve answers as RESOURCE_EXHAUSTED), as a request whose context ends
// first is, rather than held in the queue until its caller gives up.
func TestAGRPCCallsTimeoutIsItsDeadline(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.LeakyBucket(1, time.Hour).WithMaxWait(2 * time.Hour).Named("queue"),
		}}},
	})
	served := 0
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ }))
	call := func(timeout string) *http.Request {
		r := httptest.NewRequest("POST", "/pkg.Service/Method", nil)
		r.Header.Set("Content-Type", "application/grpc")
		if timeout != "" {
			r.Header.Set("Grpc-Timeout", timeout)
		}
		return r
	}
	h.ServeHTTP(httptest.NewRecorder(), call(""))
	if served != 1 {
		t.Fatal("the first call was not served at once")
	}
	// The store's clock stands still: the next call's turn comes in an hour.
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, call("2S"))
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a call of grpc-timeout 2S was held in the queue, not refused at once")
	}
	if w.Code != http.StatusTooManyRequests || served != 1 {
		t.Fatalf("a call whose turn comes in an hour, with 2 s left: %d, served %d times; want 429, not served", w.Code, served-1)
	}
	if got := w.Header().Get("Retry-After"); got != "3600" {
		t.Errorf("Retry-After %q, want 3600: the queue's wait", got)
	}
}
