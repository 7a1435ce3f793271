package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/memory"
)

// An APIGate shared by the goroutines of a job sends their checks to the
// server at once, each its own round trip: its waiters line up only after
// a refusal, so a process's admissions through the gate are not bound to
// one per round trip.
//
// The server admits everything, but answers only once two checks are at
// it together (or after 1 s): with checks in parallel the two Waits
// return at once.
func TestAnAPIGatesWaitersAskTheServerTogether(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	at := 0
	both := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at++
		if at == 2 {
			close(both) // two checks at the server at once
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(time.Second):
		}
		mu.Lock()
		at--
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"allowed":true,"identity":"external","cost":1,"remaining":1000}`))
	}))
	defer srv.Close()
	gate := client.New(srv.URL, client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second})).Gate(client.CheckRequest{Subject: "batch"})

	var wg sync.WaitGroup
	begin := time.Now()
	for range 2 {
		wg.Go(func() {
			if err := gate.Wait(context.Background(), 1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	select {
	case <-both:
	default:
		t.Errorf("two goroutines' Waits on one APIGate never had two checks at the server at once (took %v): "+
			"admissions through the gate are serialised, one per round trip", time.Since(begin).Round(time.Millisecond))
	}
}

// With FailOpen, a Transport's concurrent requests fail open together
// while the decision API does not answer (a host that blackholes, each
// check ending by the http.Client's timeout): none waits for another's
// check to time out first, and none fails with ErrWaitTooLong for the
// time it would have waited in line.
//
// Four requests at once; each check times out after 300 ms; MaxWait 1 s:
// all four are sent within ~300 ms. In line, the fourth would need 1.2 s.
func TestFailOpenSendsConcurrentRequestsWhileTheDecisionAPIHangs(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	}))
	defer api.Close()
	defer close(hang)
	var sent atomic.Int64
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent.Add(1) }))
	defer upstream.Close()

	gate := client.New(api.URL, client.WithHTTPClient(&http.Client{Timeout: 300 * time.Millisecond})).Gate(client.CheckRequest{Subject: "batch"})
	hc := &http.Client{Transport: &client.Transport{Gate: gate, FailOpen: true, IgnoreRemaining: true, Retry: client.RetryPolicy{MaxWait: time.Second}}}
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			resp, err := hc.Get(upstream.URL)
			if err == nil {
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	var failed []error
	for range n {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 || sent.Load() != n {
		t.Errorf("FailOpen with the decision API hanging: %d of %d requests sent, errors %v; want all sent", sent.Load(), n, failed)
	}
}

// slowStore answers no Apply until two are at it at once (or after 1 s):
// a shared store (Redis) whose round trip is the cost of a decision.
type slowStore struct {
	sluice.Store
	mu   sync.Mutex
	at   int
	both chan struct{}
}

func (s *slowStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.mu.Lock()
	s.at++
	if s.at == 2 {
		close(s.both)
	}
	s.mu.Unlock()
	select {
	case <-s.both:
	case <-time.After(time.Second):
	}
	s.mu.Lock()
	s.at--
	s.mu.Unlock()
	return s.Store.Apply(ctx, checks, out)
}

// A LimiterGate over a shared store asks it for its waiters at once: a
// process's admissions through a gate on Redis are not bound to one per
// Redis round trip, whatever the limit shared by the fleet allows.
func TestALimiterGatesWaitersAskTheStoreTogether(t *testing.T) {
	t.Parallel()
	mem := memory.New(memory.WithSweepInterval(0), memory.WithClockResolution(0))
	t.Cleanup(func() { mem.Close() })
	store := &slowStore{Store: mem, both: make(chan struct{})}
	gate := client.NewLimiterGate(sluice.NewLimiter(store), "fleet", sluice.PerSecond(1000))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if err := gate.Wait(context.Background(), 1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	select {
	case <-store.both:
	default:
		t.Errorf("two goroutines' Waits on one LimiterGate never had two decisions at the store at once: admissions are serialised")
	}
}

// After a refusal, one waiter sleeps its wait and asks again; those that
// come meanwhile line up behind it instead of each asking the server to
// be refused in turn. The server refuses every check for its first 500 ms
// (retryAfterMs: what remains of them) and then admits: one waiter is
// refused, seven come after, and the server sees no check until the
// 500 ms have passed, then one for each.
func TestWaitersThatComeDuringARefusalsWaitLineUpBehindIt(t *testing.T) {
	t.Parallel()
	const hold = 500 * time.Millisecond
	var mu sync.Mutex
	var begin time.Time
	early, checks := 0, 0
	refused := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		checks++
		w.Header().Set("Content-Type", "application/json")
		if left := hold - time.Since(begin); left > 0 {
			if checks == 1 {
				defer close(refused)
			} else {
				early++
			}
			fmt.Fprintf(w, `{"allowed":false,"identity":"external","cost":1,"remaining":0,"retryAfter":1,"retryAfterMs":%d,"limit":"l"}`, left.Milliseconds()+1)
			return
		}
		w.Write([]byte(`{"allowed":true,"identity":"external","cost":1,"remaining":1000}`))
	}))
	defer srv.Close()
	gate := client.New(srv.URL).Gate(client.CheckRequest{Subject: "batch"})

	mu.Lock()
	begin = time.Now()
	mu.Unlock()
	var wg sync.WaitGroup
	wait := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := gate.Wait(ctx, 1); err != nil {
			t.Error(err)
		}
	}
	first := make(chan struct{})
	wg.Go(func() { defer close(first); wait() })
	<-refused
	// The refusal reaches the waiter, which takes the turn; the seven
	// come only then (before it, they may rightly ask the server).
	for !client.TurnHeld(gate) {
		select {
		case <-first:
			t.Fatal("the refused waiter was admitted without holding the gate's turn: nobody lines up behind a refusal")
		case <-time.After(time.Millisecond):
		}
	}
	for range 7 {
		wg.Go(wait)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if early > 0 || checks != 9 {
		t.Errorf("%d checks, %d of them during the first refusal's wait; want 9 (the refused one, then one each), none during it", checks, early)
	}
}
