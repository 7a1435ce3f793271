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

// slotStats counts what a slotStatsServer's limits refused, and the
// requests its handler served at once.
type slotStats struct {
	refused, inflight, maxIn atomic.Int64
	sumIn, samples           atomic.Int64
}

// slotStatsServer serves serve behind sluice's middleware with limits, for
// one plan every client shares.
func slotStatsServer(t *testing.T, limits []sluice.Limit, serve http.HandlerFunc) (*httptest.Server, *slotStats) {
	t.Helper()
	store := memory.New(memory.WithClockResolution(0))
	t.Cleanup(func() { store.Close() })
	st := &slotStats{}
	m, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: limits}},
		Observer: func(res *httplimit.Result, _ time.Duration, err error) {
			if err == nil && !res.Decision.Allowed {
				st.refused.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := st.inflight.Add(1)
		defer st.inflight.Add(-1)
		st.sumIn.Add(n)
		st.samples.Add(1)
		for {
			m := st.maxIn.Load()
			if n <= m || st.maxIn.CompareAndSwap(m, n) {
				break
			}
		}
		serve(w, r)
	})
	return httptest.NewServer(m.Handler(h)), st
}

// slowGate is a Gate whose Wait takes d once armed (a LocalGate over a
// rate, or any Gate of the user's, pacing the request).
type slowGate struct {
	armed atomic.Bool
	d     time.Duration
}

func (g *slowGate) Wait(ctx context.Context, _ int64) error {
	if !g.armed.Load() {
		return nil
	}
	select {
	case <-time.After(g.d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RetryPolicy.MaxWait is the longest the Transport waits on its own for
// one request, at its Gate included. A request that waits 800 ms at its
// Gate and then for a concurrency slot held by a stream fails with
// ErrWaitTooLong once it has waited MaxWait (1 s) in all, not 1.8 s.
func TestAGateWaitCountsInMaxWaitBeforeASlotWait(t *testing.T) {
	stop := make(chan struct{})
	srv, _ := streamingSlotServer(t, stop)
	defer srv.Close()
	defer close(stop)
	const maxWait = time.Second
	gate := &slowGate{d: 800 * time.Millisecond}
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Gate: gate, Retry: client.RetryPolicy{MaxWait: maxWait}}}
	get := func(path string) (*http.Response, error) { return hc.Get(srv.URL + path) }
	stream := openStream(t, get)
	defer stream.Body.Close()

	gate.armed.Store(true)
	start := time.Now()
	resp, err := get("/")
	elapsed := time.Since(start)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, client.ErrWaitTooLong) || elapsed > maxWait+400*time.Millisecond {
		t.Errorf("a request paced 800 ms by its Gate, then waiting for the slot a stream holds: after %v, err %v; want ErrWaitTooLong within MaxWait %v in all", elapsed.Round(time.Millisecond), err, maxWait)
	}
}

// A server may go on serving a request whose body the client closed
// before its end (a prefix read, a decoder that stops at its value's
// end), and hold its concurrency slot until its handler returns. Such a
// request's slot is held as a failed attempt's is, until a probe learns
// the quota anew: bodies closed after their head, against a quota of 2
// slots, meet at most a probe's refusal, not one for every other request.
func TestABodyClosedBeforeItsEndHoldsItsSlotUntilAProbe(t *testing.T) {
	srv, st := slotStatsServer(t, []sluice.Limit{sluice.Concurrency(2, time.Minute)}, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("head:"))
		http.NewResponseController(w).Flush()
		time.Sleep(100 * time.Millisecond) // the rest of the work, then the rest of the body
		w.Write([]byte("the rest"))
	})
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Retry: client.RetryPolicy{MaxRetries: -1}}}
	var wg sync.WaitGroup
	var next, tooMany atomic.Int64
	start := time.Now()
	for range 3 {
		wg.Go(func() {
			for next.Add(1) <= 8 {
				resp, err := hc.Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				if resp.StatusCode == http.StatusTooManyRequests {
					tooMany.Add(1)
				}
				io.ReadFull(resp.Body, make([]byte, 5)) // the head only
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if n := st.refused.Load(); n > 1 {
		t.Errorf("8 requests whose bodies were closed after their head, against a quota of 2 slots: the server refused %d (%d 429s seen), and the batch took %v; want at most a probe's refusal", n, tooMany.Load(), time.Since(start).Round(time.Millisecond))
	}
}

// A 429 for a concurrency quota may count another client's requests: here
// the Transport holds one slot of two with a stream it keeps open, another
// client the other for 300 ms, and the Transport's request meets the 429.
// The probe after the refusal's wait goes though the stream still holds
// its slot, and finds the other client's free: the request succeeds after
// about a second, instead of waiting for the stream to end.
func TestARefusalForAnotherClientsSlotIsProbedAfterItsWait(t *testing.T) {
	stop := make(chan struct{})
	srv, _ := slotStatsServer(t, []sluice.Limit{sluice.Concurrency(2, time.Minute)}, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stream":
			w.Write([]byte("first chunk"))
			http.NewResponseController(w).Flush()
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		case "/other":
			time.Sleep(300 * time.Millisecond)
		}
	})
	defer srv.Close()
	defer close(stop)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Retry: client.RetryPolicy{MaxWait: 3 * time.Second}}}
	get := func(path string) (*http.Response, error) { return hc.Get(srv.URL + path) }
	stream := openStream(t, get)
	defer stream.Body.Close()

	// Another client of the same quota (same identity) takes the other slot.
	otherBase := &http.Transport{}
	defer otherBase.CloseIdleConnections()
	otherDone := make(chan struct{})
	go func() {
		defer close(otherDone)
		resp, err := (&http.Client{Transport: otherBase}).Get(srv.URL + "/other")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)

	start := time.Now()
	resp, err := get("/")
	elapsed := time.Since(start)
	<-otherDone
	if err != nil {
		t.Fatalf("a GET while another client held the second slot for 300 ms: after %v, %v; want 200 after the 429's Retry-After (1 s) and a probe", elapsed.Round(time.Millisecond), err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a GET while another client held the second slot for 300 ms: %s after %v; want 200", resp.Status, elapsed.Round(time.Millisecond))
	}
}
