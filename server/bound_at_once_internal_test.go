package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// boundAtOnce serves n requests at once and answers the one beyond them
// 503 with Retry-After, at once, without waiting for a slot; a slot freed
// serves again.
func TestBoundAtOnceServesNAndRefusesTheNext(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	h := boundAtOnce(2, "reads of /x", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Done()
		<-release
	}))
	var served sync.WaitGroup
	for range 2 {
		started.Add(1)
		served.Go(func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil)) })
	}
	started.Wait() // both slots taken
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), "2 reads of /x") {
		t.Errorf("a third request with two served: %d, Retry-After %q, %s; want 503, Retry-After 1, naming the bound",
			rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	close(release)
	served.Wait()
	started.Add(1)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("a request after the slots were freed: %d, want 200", rec.Code)
	}
}
