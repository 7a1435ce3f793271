package server_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/server"
)

// /readyz needs no credentials, so a stranger may send as many as it
// likes: they share one probe of the store at a time, and never make a
// store call of their own each (a flood of PINGs on the Redis every
// decision needs).
func TestReadyProbesOfTheStoreAreOneAtATime(t *testing.T) {
	const probes = 20
	var inFlight, most, calls atomic.Int64
	release := make(chan struct{})
	f := newFixtureWith(t, testConfig, func(o *server.Options) {
		o.Ready = func(ctx context.Context) error {
			calls.Add(1)
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}
	})
	var wg sync.WaitGroup
	codes := make([]int, probes)
	for i := range probes {
		wg.Go(func() {
			r, err := f.admin.Client().Get(f.admin.URL + "/readyz")
			if err != nil {
				t.Error(err)
				return
			}
			r.Body.Close()
			codes[i] = r.StatusCode
		})
	}
	// Every probe is given the time to arrive, or to start a call of its own.
	for deadline := time.Now().Add(2 * time.Second); inFlight.Load() < probes && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Errorf("%d /readyz at once made %d store probes at once, want 1 (%d in all)", probes, m, calls.Load())
	}
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("probe %d: %d, want 200", i, c)
		}
	}
}

// A store that does not answer its probe makes /readyz answer all the same,
// within a bound, as a store that is not reachable: a probe never holds
// its connection for as long as the store hangs.
func TestReadyAnswersWhileTheStoreHangs(t *testing.T) {
	var deadlines atomic.Int64
	f := newFixtureWith(t, testConfig+"store: {type: redis, redis: {addresses: [\"127.0.0.1:1\"], on_store_error: deny}}\n", func(o *server.Options) {
		o.Ready = func(ctx context.Context) error {
			if _, ok := ctx.Deadline(); ok {
				deadlines.Add(1)
			}
			<-ctx.Done()
			return ctx.Err()
		}
	})
	client := &http.Client{Timeout: 15 * time.Second}
	start := time.Now()
	r, err := client.Get(f.admin.URL + "/readyz")
	if err != nil {
		t.Fatalf("/readyz while the store hangs: %v after %v, want an answer", err, time.Since(start))
	}
	body := readAll(t, r)
	if r.StatusCode != http.StatusServiceUnavailable || deadlines.Load() != 1 {
		t.Errorf("/readyz while the store hangs, under deny: %d %q after %v, probes with a deadline %d; want 503 and 1", r.StatusCode, body, time.Since(start), deadlines.Load())
	}
}
