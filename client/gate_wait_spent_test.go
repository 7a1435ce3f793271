package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Gate: gate, Retry: client.RetryPolicy{MaxWait: 10 * time.Millisecond}}}
	start := time.Now()
	resp, err := hc.Get(srv.URL)
	took := time.Since(start)
	if err == nil {
		resp.Body.Close()
	}
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
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Gate: gate, Retry: client.RetryPolicy{MaxWait: 10 * time.Millisecond}}}
	resp, err := hc.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, client.ErrWaitTooLong) || calls.Load() != 0 {
		t.Errorf("a Gate that refuses for ~15 ms, MaxWait 10 ms: %v, %d sent; want ErrWaitTooLong at once, nothing sent", err, calls.Load())
	}
}
