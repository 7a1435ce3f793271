package httplimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A client that leaves a leaky-bucket queue before its turn never reached
// the upstream, which used nothing for it: a limit counting what the
// answer reports gets its whole reservation back, and OnReported, which
// sees answers, is not told of it (it would count an upstream that does
// not report).
func TestALeftQueueUsesNothingOfAHeaderCount(t *testing.T) {
	var told int
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.LeakyBucket(40, time.Second).WithMaxWait(10 * time.Second).Named("queue"),
			sluice.FixedWindow(100, time.Minute).Named("tokens"),
		}, Costs: map[string]int64{"GET /": 40}}},
		Count:      map[string]string{"tokens": httplimit.CountHeader + "X-Usage-Tokens"},
		OnReported: func(string, int64, int64, bool) { told++ },
	})
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Usage-Tokens", "10")
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if got := remaining(t, mw)["tokens"]; got != 90 || told != 1 {
		t.Fatalf("after one answer reporting 10 tokens: %d left, OnReported told %d times; want 90, 1", got, told)
	}
	// The store's clock stands still: the next request waits a second in
	// the queue, which its client, gone already, does not.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	if w.Header().Get("X-Usage-Tokens") != "" {
		t.Fatal("a client that left the queue reached the handler")
	}
	if got := remaining(t, mw)["tokens"]; got != 90 || told != 1 {
		t.Errorf("after a client left the queue: %d tokens left, OnReported told %d times; want 90 (nothing used), 1", got, told)
	}
}

// DoneUnserved ends a request that Decide admitted and that was never
// served, for a caller of Decide (a framework adapter, grpclimit): a
// limit counting what the answer reports gets its whole cost back, one
// counting only successes its charge (no answer is a failure), and a
// limit counting every request keeps its charge.
func TestDoneUnservedUsesNothing(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.FixedWindow(100, time.Minute).Named("tokens"),
			sluice.FixedWindow(100, time.Minute).Named("good"),
			sluice.FixedWindow(100, time.Minute).Named("all"),
		}, Costs: map[string]int64{"GET /": 40}}},
		Count: map[string]string{"tokens": httplimit.CountHeader + "X-Usage-Tokens", "good": httplimit.CountSuccesses},
	})
	res, err := mw.Decide(httptest.NewRequest("GET", "/", nil))
	if err != nil || !res.Decision.Allowed {
		t.Fatalf("Decide: %+v, %v", res, err)
	}
	mw.DoneUnserved(context.Background(), res)
	left := remaining(t, mw)
	if left["tokens"] != 100 || left["good"] != 100 || left["all"] != 60 {
		t.Errorf("after a request never served: %v; want tokens 100, good 100, all 60", left)
	}
}
