package client_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A 429 from a host that states no quota of content bytes says nothing of
// content bytes: after it, uploads go together as before, not one at a
// time while the first probes a quota of bytes the host never had. Before,
// the refusal of a GET made the next upload a probe of content bytes, and
// the one beside it waited for its answer.
func TestARefusalOfRequestsDoesNotHoldUploadsBack(t *testing.T) {
	var calls, inFlight, most atomic.Int64
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		h := http.Header{}
		h.Set("RateLimit-Policy", `"calls";q=100;w=60`)
		if calls.Add(1) == 1 {
			h.Set("RateLimit", `"calls";r=0;t=1`)
			h.Set("Retry-After", "1")
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		}
		h.Set("RateLimit", `"calls";r=90;t=60`)
		if r.Method == http.MethodPost {
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(200 * time.Millisecond)
			inFlight.Add(-1)
		}
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	req, _ := http.NewRequest(http.MethodGet, "http://uploads.example/files", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a GET refused once, then retried: %v", err)
	}
	resp.Body.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := post(tr, 5*time.Second, "content", false); err != nil {
				t.Errorf("upload: %v", err)
			}
		}()
	}
	wg.Wait()
	if most.Load() != 2 {
		t.Errorf("at most %d uploads at the server at once; want both", most.Load())
	}
}
