package httplimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A request admitted by a leaky-bucket queue whose turn comes after its
// context's deadline cannot be answered in time: it is refused at once by
// the queue, 429 with the queue's wait as Retry-After, rather than held
// until its deadline passes with no answer. The Observer is told of the
// refusal its client saw, once; the charges that can be given back (a
// fixed window's) are, and its concurrency lease is released.
func TestATurnAfterTheDeadlineIsRefusedAtOnce(t *testing.T) {
	var (
		mu       sync.Mutex
		observed []bool
	)
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.LeakyBucket(1, time.Hour).WithMaxWait(2 * time.Hour).Named("queue"),
			sluice.FixedWindow(10, time.Hour).Named("hourly"),
			sluice.Concurrency(1, time.Minute).Named("parallel"),
		}}},
		Observer: func(res *httplimit.Result, _ time.Duration, err error) {
			if err == nil {
				mu.Lock()
				observed = append(observed, res.Decision.Allowed)
				mu.Unlock()
			}
		},
	})
	served := 0
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if served != 1 {
		t.Fatal("the first request was not served at once")
	}

	// The store's clock stands still: the next request's turn comes in an
	// hour, and it has 2 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	if ctx.Err() != nil {
		t.Fatal("the request was held until its deadline, not refused at once")
	}
	if w.Code != http.StatusTooManyRequests || served != 1 {
		t.Fatalf("a request whose turn comes in an hour, with 2 s left: %d, served %d times; want 429, not served", w.Code, served-1)
	}
	if got := w.Header().Get("Retry-After"); got != "3600" {
		t.Errorf("Retry-After %q, want 3600: the queue's wait", got)
	}
	mu.Lock()
	if len(observed) != 2 || !observed[0] || observed[1] {
		t.Errorf("observed %v; want [true false]: the late request observed once, refused", observed)
	}
	mu.Unlock()
	left := remaining(t, mw)
	if left["hourly"] != 9 || left["parallel"] != 1 {
		t.Errorf("after the refusal: %v; want hourly 9 (its charge given back), parallel 1 (its lease released)", left)
	}
}
