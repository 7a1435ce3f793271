package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestOnQueuedIsToldBeforeTheQueuesWait: Handler tells OnQueued of a
// request a leaky-bucket queue admitted with a delay, with the
// ResponseWriter it was given and the delay, before it waits the delay out
// (a server moves its write deadline there); a request admitted at once is
// not told.
func TestOnQueuedIsToldBeforeTheQueuesWait(t *testing.T) {
	type told struct {
		w     http.ResponseWriter
		delay time.Duration
		at    time.Time
	}
	var calls []told
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.LeakyBucket(20, time.Second).WithBurst(1).WithMaxWait(time.Second).Named("queue"),
		}}},
		OnQueued: func(w http.ResponseWriter, r *http.Request, delay time.Duration) {
			calls = append(calls, told{w, delay, time.Now()})
		},
	})
	var served time.Time
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = time.Now() }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if len(calls) != 0 {
		t.Fatalf("a request admitted at once: OnQueued told %d times; want none", len(calls))
	}
	// The store's clock stands still: the next request waits its turn,
	// 1/20 s.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if len(calls) != 1 || calls[0].w != w || calls[0].delay != 50*time.Millisecond {
		t.Fatalf("a request queued 50ms: OnQueued told %+v; want once, with its ResponseWriter and 50ms", calls)
	}
	if waited := served.Sub(calls[0].at); waited < calls[0].delay {
		t.Errorf("the request was served %v after OnQueued was told; want at least its delay, %v", waited, calls[0].delay)
	}
}
