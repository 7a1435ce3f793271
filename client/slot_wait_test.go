package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// streamingSlotServer is a oneSlotServer whose "/stream" writes a first
// chunk and holds its slot until stop is closed.
func streamingSlotServer(t *testing.T, stop <-chan struct{}) (*httptest.Server, *atomic.Int64) {
	return oneSlotServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/stream" {
			return
		}
		w.Write([]byte("first chunk"))
		http.NewResponseController(w).Flush()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
}

// openStream sends the probe that learns the quota of one slot, then opens
// a body that holds it.
func openStream(t *testing.T, get func(string) (*http.Response, error)) *http.Response {
	t.Helper()
	resp, err := get("/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stream, err := get("/stream")
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("stream: %v %v", stream, err)
	}
	if _, err := io.ReadFull(stream.Body, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	return stream
}

// RetryPolicy.MaxWait is the longest the Transport waits on its own for
// one request. A wait for a concurrency quota's slot, held by a body still
// streaming, has no known end: without a deadline, the request fails with
// ErrWaitTooLong once it has waited MaxWait, not when the body ends.
func TestASlotWaitIsBoundedByMaxWait(t *testing.T) {
	stop := make(chan struct{})
	srv, refused := streamingSlotServer(t, stop)
	defer srv.Close()
	defer close(stop)
	const maxWait = 500 * time.Millisecond
	hc := &http.Client{Transport: &client.Transport{Retry: client.RetryPolicy{MaxWait: maxWait}}}
	get := func(path string) (*http.Response, error) { return hc.Get(srv.URL + path) }
	stream := openStream(t, get)
	defer stream.Body.Close()

	start := time.Now()
	resp, err := get("/")
	elapsed := time.Since(start)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, client.ErrWaitTooLong) || elapsed < maxWait/2 || elapsed > maxWait+1500*time.Millisecond {
		t.Errorf("a request while a body held the only slot: after %v, err %v; want ErrWaitTooLong after about %v", elapsed, err, maxWait)
	}
	if n := refused.Load(); n > 0 {
		t.Errorf("the server refused %d requests", n)
	}
}

// A MaxWait shorter than the second a concurrency answer's reset is taken
// to be still lets a request wait for a slot: the reset is when the host
// looks again, not when the wait ends. A request made while a body holds
// the only slot goes once the body has been read to its end, within
// MaxWait.
func TestARequestWaitsForASlotUpToAShortMaxWait(t *testing.T) {
	stop := make(chan struct{})
	srv, refused := streamingSlotServer(t, stop)
	defer srv.Close()
	hc := &http.Client{Transport: &client.Transport{Retry: client.RetryPolicy{MaxWait: 900 * time.Millisecond}}}
	get := func(path string) (*http.Response, error) { return hc.Get(srv.URL + path) }
	stream := openStream(t, get)
	time.AfterFunc(100*time.Millisecond, func() { close(stop) }) // the stream ends
	go func() {
		io.Copy(io.Discard, stream.Body)
		stream.Body.Close()
	}()

	resp, err := get("/")
	if err != nil {
		t.Fatalf("a request while a body held the only slot for 100 ms, MaxWait 900 ms: %v; want it sent once the body ended", err)
	}
	resp.Body.Close()
	if n := refused.Load(); n > 0 {
		t.Errorf("the server refused %d requests", n)
	}
}

// A concurrency quota's host keeps as many requests in flight as it has
// slots, and no more. Answers that stream their body for a moment (headers
// flushed first, the rest 20 ms later), each read to its end and closed,
// meet no refusal of sluice's own middleware under a limit of 3: a slot
// the server gives back before it decides another request (the body's
// last bytes still on the way) is counted once, not again when that body
// ends.
func TestStreamingBodiesUnderAConcurrencyQuotaMeetNoRefusal(t *testing.T) {
	store := memory.New(memory.WithClockResolution(0))
	defer store.Close()
	var refused atomic.Int64
	m, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.Concurrency(3, time.Minute)}}},
		Observer: func(res *httplimit.Result, _ time.Duration, err error) {
			if err == nil && !res.Decision.Allowed {
				refused.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 100))
		http.NewResponseController(w).Flush()
		time.Sleep(20 * time.Millisecond)
		w.Write(make([]byte, 100))
	})))
	defer srv.Close()
	hc := &http.Client{Transport: &client.Transport{Retry: client.RetryPolicy{MaxRetries: -1}}}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 8 {
		wg.Go(func() {
			for next.Add(1) <= 120 {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
				resp, err := hc.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if n := refused.Load(); n > 0 {
		t.Errorf("the server refused %d of the Transport's requests; want none: every body was read to its end and closed", n)
	}
}
