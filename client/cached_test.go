package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A response a cache served (Age above 0) carries the RateLimit fields
// the origin sent when the cache stored it, not the quota now: the draft
// says they SHOULD be ignored, and a Transport learns nothing from them.
// A cached "r=0;t=60" does not hold the host for a minute.
func TestACachedResponseSaysNothingOfTheQuota(t *testing.T) {
	var calls atomic.Int64
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		if calls.Add(1) == 1 {
			h.Set("Age", "30")
			h.Set("RateLimit-Policy", `"hourly";q=100;w=3600`)
			h.Set("RateLimit", `"hourly";r=0;t=60`)
		}
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/items", nil)
		resp, err := tr.RoundTrip(req)
		cancel()
		if err != nil {
			t.Fatalf("request %d after a cached response stating a spent quota: %v; want it sent", i+1, err)
		}
		resp.Body.Close()
	}
}

// Transport's doc: the RateLimit fields of "a response a cache served,
// with an Age above 0, whose headers say what remained when it was stored:
// they are ignored", and draft-ietf-httpapi-ratelimit-headers says such
// fields SHOULD be ignored. A response a cache in front of the server
// served never reached the server: it says nothing of the quota now,
// neither that it binds nor that it no longer does. Yet on a host bound by
// a concurrency quota alone, such an answer (its stale fields dropped, so
// read as "without fields") counts as the server having stopped stating
// the quota (bound.slotsOnly, the "dropped" case of hostState.finish), and
// opens the host: the requests that follow all go at once, past the
// quota's 2 slots, into the server's 429s.
func TestACachedAnswerDoesNotOpenAHostBoundBySlots(t *testing.T) {
	var inFlight, refused atomic.Int64
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"c";q=2;qu="concurrent-requests"`)
		if r.URL.Path == "/cached" {
			// What a CDN in front returns from storage: the origin's
			// fields as they were when it stored the answer, and an Age.
			w.Header().Set("Age", "30")
			w.Header().Set("RateLimit", `"c";r=1`)
			io.WriteString(w, "stored")
			return
		}
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		time.Sleep(100 * time.Millisecond) // the streams' answers come after all are sent
		if n > 2 {
			refused.Add(1)
			w.Header().Set("RateLimit", `"c";r=0`)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("RateLimit", `"c";r=`+strconv.FormatInt(2-n, 10))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if r.URL.Path == "/stream" {
			<-hold
		}
		io.WriteString(w, "done")
	}))
	defer srv.Close()
	defer close(hold)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base,
		Retry: client.RetryPolicy{MaxRetries: -1, MaxWait: 300 * time.Millisecond}}}
	get := func(path string) (*http.Response, error) { return hc.Get(srv.URL + path) }
	readAll := func(path string) {
		resp, err := get(path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	readAll("/")       // the server states its concurrency quota of 2: the host is bound by slots alone
	readAll("/cached") // a cache in front answers, Age 30: it says nothing of the quota now

	var wg sync.WaitGroup
	var mu sync.Mutex
	var bodies []io.Closer
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := get("/stream")
			if err != nil {
				return // held for a slot past MaxWait: fine
			}
			mu.Lock()
			bodies = append(bodies, resp.Body)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, b := range bodies {
		b.Close()
	}
	if n := refused.Load(); n > 0 {
		t.Errorf("after an answer a cache served (Age: 30), 4 streams at once to a host whose quota is 2 concurrent requests: the server refused %d (429); want at most 2 sent, the others held for a slot", n)
	}
}

// The same of a probe: a host whose quota is spent sends one request alone
// after the reset, and an answer without fields to it opens the host (the
// server states no quota now). An answer a cache served never reached the
// server: the host stays bound, and the next request probes alone again,
// rather than all going at once.
func TestACachedAnswerToAProbeDoesNotOpenAHost(t *testing.T) {
	var calls, inFlight, most atomic.Int64
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		if calls.Add(1) == 1 {
			h.Set("RateLimit", `"p";r=0;t=1`) // spent until a second from now
		} else {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(50 * time.Millisecond)
			h.Set("Age", "30") // a cache in front answers
		}
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
	})}
	get := func() {
		req, _ := http.NewRequest(http.MethodGet, "http://api.example/items", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	get()
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get()
		}()
	}
	wg.Wait()
	if n := most.Load(); n > 1 {
		t.Errorf("3 requests after the reset of a spent quota, every answer from a cache: %d in flight at once; want each sent alone as a probe", n)
	}
}
