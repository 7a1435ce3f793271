package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// A Gate's call spends of RetryPolicy.MaxWait the longer of the waits this
// package's Gates report and what the call lasts beyond 20 ms. A Gate of
// another package that paces 800 ms on its own and then asks a LocalGate
// (which admits at once) has waited 800 ms, whatever the LocalGate
// reports: refused with Retry-After: 1 under a MaxWait of 1 s, the request
// is not retried, its 429 returned at once, as of a plain GateFunc
// (TestAGateWaitCountsInMaxWaitBeforeARetry).
func TestAWrappingGatesOwnPacingCountsInMaxWait(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	inner := client.NewLocalGate(sluice.TokenBucket(1000, time.Second))
	var first atomic.Bool
	wrapper := client.GateFunc(func(ctx context.Context, cost int64) error {
		if !first.Swap(true) { // its own pacing, before the first attempt
			t := time.NewTimer(800 * time.Millisecond)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return inner.Wait(ctx, cost)
	})
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Gate: wrapper, Retry: client.RetryPolicy{MaxWait: time.Second}}}
	start := time.Now()
	resp, err := hc.Get(srv.URL)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || calls.Load() != 1 || took > 1300*time.Millisecond {
		t.Errorf("gated 800 ms by a wrapping Gate, then Retry-After: 1 under MaxWait 1 s: status %d after %d attempts in %v; want the 429 at once (1 attempt, ~0.8 s)",
			resp.StatusCode, calls.Load(), took.Round(time.Millisecond))
	}
}

// ErrWaitTooLong is returned instead of waiting when a wait has a known
// end beyond MaxWait. A LocalGate whose leaky-bucket queue admits with a
// Delay of about 18 ms knows its wait: under a MaxWait of 10 ms the request
// fails at once with ErrWaitTooLong, unsent. The 20 ms a Gate is given at
// least to answer bound its round trips, not the waits it knows.
func TestAGatesKnownDelayBeyondMaxWaitIsNotWaited(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
	}))
	defer srv.Close()
	gate := client.NewLocalGate(sluice.LeakyBucket(1, 18*time.Millisecond).WithMaxWait(time.Second))
	if err := gate.Wait(context.Background(), 1); err != nil { // the queue's next slot is ~18 ms away
		t.Fatal(err)
	}
	start := time.Now()
	_, err := getThrough(srv.URL, gate, 10*time.Millisecond)
	took := time.Since(start)
	if !errors.Is(err, client.ErrWaitTooLong) || calls.Load() != 0 {
		t.Errorf("a Gate whose queue admits ~18 ms from now, MaxWait 10 ms: %v after %v, %d sent; want ErrWaitTooLong at once, nothing sent",
			err, took.Round(time.Millisecond), calls.Load())
	}
}

// The same of a refusal's RetryAfter: a LocalGate whose token bucket
// refuses for about 15 ms knows its wait, and under a MaxWait of 10 ms the
// request fails at once with ErrWaitTooLong, unsent.
func TestAGatesKnownRefusalBeyondMaxWaitIsNotWaited(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
	}))
	defer srv.Close()
	gate := client.NewLocalGate(sluice.TokenBucket(1, 15*time.Millisecond))
	if err := gate.Wait(context.Background(), 1); err != nil { // the next token is ~15 ms away
		t.Fatal(err)
	}
	_, err := getThrough(srv.URL, gate, 10*time.Millisecond)
	if !errors.Is(err, client.ErrWaitTooLong) || calls.Load() != 0 {
		t.Errorf("a Gate that refuses for ~15 ms, MaxWait 10 ms: %v, %d sent; want ErrWaitTooLong at once, nothing sent", err, calls.Load())
	}
}

// The waits of a Gate of this package whose end it does not know are
// bounded by what is left of MaxWait too, not by the 20 ms it is given to
// answer. A LocalGate over a concurrency limit and a token bucket, whose
// slot is held (freed 2 ms after the request asks for it) and whose token
// comes back about 8 ms from now, waits for its slot as
// sluice.Limiter.Wait does: the token bucket's refusal, about 8 ms, is
// past a MaxWait of 1 ms, and the request fails with ErrWaitTooLong,
// unsent, rather than be sent when the token comes back.
func TestAKnownRefusalWhileWaitingForASlotIsNotWaitedPastMaxWait(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
	}))
	defer srv.Close()
	gate := client.NewLocalGate(sluice.Concurrency(1, time.Minute), sluice.TokenBucket(1, 8*time.Millisecond))
	held, err := gate.Acquire(context.Background(), 1) // the slot is held, the next token ~8 ms away
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	asked := client.GateFunc(func(ctx context.Context, cost int64) error {
		time.AfterFunc(2*time.Millisecond, held)
		return gate.Wait(ctx, cost)
	})
	_, err = getThrough(srv.URL, asked, time.Millisecond)
	if !errors.Is(err, client.ErrWaitTooLong) || calls.Load() != 0 {
		t.Errorf("a Gate waiting for a slot, then refused by a token bucket for ~8 ms, MaxWait 1 ms: %v, %d sent; want ErrWaitTooLong, nothing sent",
			err, calls.Load())
	}
}

// The same of a wait in line, whose end is not known: a request that finds
// another waiter holding its LocalGate's turn (refused for ~500 ms, it
// leaves 8 ms after the request asks for its turn) fails with
// ErrWaitTooLong once it has waited what is left of a MaxWait of 1 ms,
// unsent, rather than take the turn 8 ms later and be admitted.
func TestAWaitInLineIsBoundedByMaxWait(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
	}))
	defer srv.Close()
	gate := client.NewLocalGate(sluice.TokenBucket(2, time.Second)) // a token every 500 ms, 2 at most
	if err := gate.Wait(context.Background(), 1); err != nil {      // 1 token left
		t.Fatal(err)
	}
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	done := make(chan struct{})
	go func() {
		defer close(done)
		gate.Wait(ctx, 2) // refused for ~500 ms: takes the turn and holds it until ctx ends
	}()
	time.Sleep(10 * time.Millisecond) // the waiter holds the turn by now
	asked := client.GateFunc(func(ctx context.Context, cost int64) error {
		time.AfterFunc(8*time.Millisecond, leave)
		return gate.Wait(ctx, cost)
	})
	_, err := getThrough(srv.URL, asked, time.Millisecond)
	<-done
	if !errors.Is(err, client.ErrWaitTooLong) || calls.Load() != 0 {
		t.Errorf("in line behind a waiter that leaves after 8 ms, MaxWait 1 ms: %v, %d sent; want ErrWaitTooLong, nothing sent",
			err, calls.Load())
	}
}

// The waits reported during one Gate call may overlap: a Gate of another
// package that asks two LocalGates at once (a per-tenant and a global
// budget, say), each refusing for ~400 ms, blocks the request ~400 ms,
// not 800. Its call spends of MaxWait no more than it lasted: under a
// MaxWait of 1.6 s, the Retry-After: 1 that follows fits in the ~1.2 s left
// and the request is retried.
func TestWaitsOfTwoGatesAskedAtOnceCountOnceInMaxWait(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	gates := []*client.LimiterGate{
		client.NewLocalGate(sluice.TokenBucket(1, 400*time.Millisecond)),
		client.NewLocalGate(sluice.TokenBucket(1, 400*time.Millisecond)),
	}
	for _, g := range gates {
		if err := g.Wait(context.Background(), 1); err != nil { // the next token is ~400 ms away
			t.Fatal(err)
		}
	}
	both := client.GateFunc(func(ctx context.Context, cost int64) error {
		var wg sync.WaitGroup
		errs := make([]error, len(gates))
		for i, g := range gates {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = g.Wait(ctx, cost) }()
		}
		wg.Wait()
		return errors.Join(errs...)
	})
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Gate: both, Retry: client.RetryPolicy{MaxWait: 1600 * time.Millisecond}}}
	start := time.Now()
	resp, err := hc.Get(srv.URL)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
		t.Errorf("gated ~400 ms by two Gates at once, then Retry-After: 1 under MaxWait 1.6 s: status %d after %d attempts in %v; want the retry made (200 after 2 attempts, ~1.4 s)",
			resp.StatusCode, calls.Load(), took.Round(time.Millisecond))
	}
}

// A Gate's round trips are no wait: its context ends 20 ms after what is
// left of MaxWait, so that a Gate that accepted a wait fitting in what was
// left has its round trip to ask again after it. An APIGate refused with
// retryAfterMs 298 under a MaxWait of 300 ms waits 298 ms, then checks
// again in ~3 ms, the check's round trip spending none of MaxWait: the
// request is sent, not failed with ErrWaitTooLong after the whole wait.
// (Those 20 ms are all the round trips have: a loaded machine that stalls
// one past them fails the request so, and the request is tried anew, three
// times at most.)
func TestAGatesRoundTripAfterAWaitThatFitsIsNotCut(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent.Add(1) }))
	defer srv.Close()
	try := func() error {
		var checks atomic.Int64
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch checks.Add(1) {
			case 2:
				w.Write([]byte(`{"allowed":false,"identity":"external","cost":1,"remaining":0,"retryAfterMs":298}`))
				return
			case 3:
				time.Sleep(3 * time.Millisecond) // the decision API's round trip
			}
			w.Write([]byte(`{"allowed":true,"identity":"external","cost":1,"remaining":10}`))
		}))
		defer api.Close()
		gate := client.New(api.URL).Gate(client.CheckRequest{Subject: "s"})
		if err := gate.Wait(context.Background(), 1); err != nil { // a connection to the API, ready
			t.Fatal(err)
		}
		base := &http.Transport{}
		defer base.CloseIdleConnections()
		hc := &http.Client{Transport: &client.Transport{Base: base, Gate: gate, Retry: client.RetryPolicy{MaxWait: 300 * time.Millisecond}}}
		resp, err := hc.Get(srv.URL)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	var err error
	for range 3 {
		if err = try(); !errors.Is(err, client.ErrWaitTooLong) {
			break
		}
	}
	if err != nil || sent.Load() != 1 {
		t.Errorf("refused 298 ms by an APIGate under MaxWait 300 ms, then a ~3 ms check: %v, %d sent; want the request sent after the wait, once",
			err, sent.Load())
	}
}
