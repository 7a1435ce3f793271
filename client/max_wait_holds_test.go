package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// NewPacer: "a wait with a known end beyond [maxWait] fails at once with
// ErrWaitTooLong". A call held first by a 503's wait (1 s) and then by a
// policy spent until its reset (2 s after it was reported) has a known
// end 2 s away: with a MaxWait of 1.5 s it fails at once, rather than
// being held 2 s, each hold having been checked on its own.
func TestAPacerNeverHoldsACallBeyondMaxWaitAcrossTwoHolds(t *testing.T) {
	p := client.NewPacer("s", 1500*time.Millisecond)
	policy := func(r string) http.Header {
		h := http.Header{}
		h.Set("RateLimit", `"p";`+r)
		return h
	}
	probe, err := p.Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	probe.Done(client.Answer{Header: policy("r=2;t=2")})
	b, err := p.Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	b.Done(client.Answer{Header: policy("r=0;t=2")})                  // the quota is spent until 2 s from now
	c.Done(client.Answer{Unavailable: true, RetryAfter: time.Second}) // the server sheds calls for 1 s

	start := time.Now()
	d, err := p.Wait(context.Background(), 1)
	held := time.Since(start)
	if err == nil {
		d.Done(client.Answer{Header: policy("r=9;t=2")})
	}
	if !errors.Is(err, client.ErrWaitTooLong) || held > 500*time.Millisecond {
		t.Errorf("a call whose holds end 2 s from now, with a MaxWait of 1.5 s: held %v, %v; want ErrWaitTooLong at once",
			held.Round(time.Millisecond), err)
	}
}

// The same of Transport, whose RetryPolicy.MaxWait bounds a request held
// for a spent quota, and of a deadline: a request held by a 503's
// Retry-After (1 s) and then by a quota spent until its reset (2 s) fails
// at once with a MaxWait of 1.5 s, and with a deadline 1.5 s away.
func TestATransportNeverHoldsARequestBeyondMaxWaitAcrossTwoHolds(t *testing.T) {
	answer := func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		status := http.StatusOK
		switch r.URL.Path {
		case "/probe":
			h.Set("RateLimit", `"p";r=2;t=2`)
		case "/spend":
			h.Set("RateLimit", `"p";r=0;t=2`)
		case "/shed":
			status = http.StatusServiceUnavailable
			h.Set("Retry-After", "1")
		default:
			h.Set("RateLimit", `"p";r=9;t=2`)
		}
		return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
	}
	for _, c := range []struct {
		name    string
		maxWait time.Duration
		timeout time.Duration
	}{
		{"MaxWait", 1500 * time.Millisecond, 5 * time.Second},
		{"deadline", time.Minute, 1500 * time.Millisecond},
	} {
		tr := &client.Transport{Base: roundTripFunc(answer), Retry: client.RetryPolicy{MaxWait: c.maxWait}}
		send := func(ctx context.Context, method, path string) (time.Duration, error) {
			req, _ := http.NewRequestWithContext(ctx, method, "http://api.example"+path, nil)
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return time.Since(start), err
		}
		for _, p := range []string{"/probe", "/spend"} {
			if _, err := send(context.Background(), http.MethodGet, p); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := send(context.Background(), http.MethodPost, "/shed"); err != nil { // not retried: a POST
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		held, err := send(ctx, http.MethodGet, "/next")
		cancel()
		if !errors.Is(err, client.ErrWaitTooLong) || held > 500*time.Millisecond {
			t.Errorf("%s: a request whose holds end 2 s from now, 1.5 s allowed: held %v, %v; want ErrWaitTooLong at once",
				c.name, held.Round(time.Millisecond), err)
		}
	}
}

// RetryPolicy.MaxWait: "the longest the Transport waits on its own for one
// request". A request paced 800 ms by its Gate, then refused with
// Retry-After: 1, has 200 ms of a MaxWait of 1 s left: the retry's wait
// of a second is not begun, and the 429 is returned at once, not after
// 1.8 s in all.
func TestAGateWaitCountsInMaxWaitBeforeARetry(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	const maxWait = time.Second
	var gated atomic.Int64
	gate := client.GateFunc(func(ctx context.Context, _ int64) error {
		if gated.Add(1) > 1 {
			return nil
		}
		select {
		case <-time.After(800 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Gate: gate, Retry: client.RetryPolicy{MaxWait: maxWait}}}
	start := time.Now()
	resp, err := hc.Get(srv.URL)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || elapsed > maxWait {
		t.Errorf("a request paced 800 ms by its Gate, then refused with Retry-After: 1, MaxWait %v: %d after %v; want the 429 at once, within MaxWait", maxWait, resp.StatusCode, elapsed.Round(time.Millisecond))
	}
}

// RetryPolicy.MaxWait: "the longest the Transport waits on its own for one
// request, its waits counted together (the Gate's, the holds', a slot's,
// and those before its retries): a retry that would have to wait longer
// is not made". A Gate far from its limit admits at once: the request
// waits nothing there, and the time its call takes (a round trip to Redis
// or a decision API) is no wait. Refused with Retry-After: 1 under a
// MaxWait of 1 s, the request is retried (its wait, 1 s, is not longer
// than MaxWait), through such a Gate as without one.
func TestAGateThatAdmitsAtOnceSpendsNoneOfMaxWait(t *testing.T) {
	for _, gated := range []bool{false, true} {
		var calls atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			io.WriteString(w, "ok")
		}))
		status, err := getWithin(srv.URL, time.Second, gated)
		srv.Close()
		if status != http.StatusOK {
			t.Errorf("gate %v: a request refused with Retry-After: 1, MaxWait 1 s: status %d, %v, %d attempts; want it retried after the second, as without a Gate (200)", gated, status, err, calls.Load())
		}
	}
}

// The retry's wait is accepted against what is left of MaxWait, and the
// throttled answer's body is drained while it lasts; a body that ends late
// puts the retry off no further than what the wait leaves of MaxWait (50
// ms here, not drainGrace's 100 ms). The Gate is then asked with little or
// nothing of MaxWait left: one that would admit at once admits (it is
// given time to answer), and the retry its wait was accepted for is made,
// through such a Gate as without one, rather than failing with
// ErrWaitTooLong blamed on the Gate.
func TestARetryAcceptedWithinMaxWaitIsMadeThroughAGateThatWouldNotWait(t *testing.T) {
	for _, gated := range []bool{false, true} {
		var calls atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, "slow down")
				w.(http.Flusher).Flush()
				select { // a body that ends late
				case <-time.After(1500 * time.Millisecond):
				case <-r.Context().Done():
				}
				return
			}
			io.WriteString(w, "ok")
		}))
		status, err := getWithin(srv.URL, 1050*time.Millisecond, gated)
		srv.Close()
		if err != nil {
			t.Errorf("gate %v: a request refused with Retry-After: 1 (a body that ends late), MaxWait 1.05 s: %v after %d attempts; want the retry made (200), or the 429 returned, not an error", gated, err, calls.Load())
		} else if status != http.StatusOK {
			t.Logf("gate %v: status %d", gated, status)
		}
	}
}

// A Gate of this package reports its own waits exactly: a LimiterGate
// whose window is spent waits for it (some 800 ms), and that wait counts
// in MaxWait as a GateFunc's does. Refused then with Retry-After: 1 under
// a MaxWait of 1 s, the request is not retried: its 429 is returned at
// once.
func TestALimiterGatesWaitCountsInMaxWaitBeforeARetry(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	gate := client.NewLocalGate(sluice.FixedWindow(1, 800*time.Millisecond))
	if err := gate.Wait(context.Background(), 1); err != nil { // the window spent
		t.Fatal(err)
	}
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Gate: gate, Retry: client.RetryPolicy{MaxWait: time.Second}}}
	start := time.Now()
	resp, err := hc.Get(srv.URL)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || elapsed > time.Second || calls.Load() != 1 {
		t.Errorf("a request paced by its LimiterGate, then refused with Retry-After: 1, MaxWait 1 s: %d after %v, %d attempts; want the 429 at once, within MaxWait",
			resp.StatusCode, elapsed.Round(time.Millisecond), calls.Load())
	}
}

// getWithin sends a GET to url through a Transport whose retries wait at
// most maxWait, behind a Gate that admits at once when gated, and returns
// the answer's status (0 with an error) and the error.
func getWithin(url string, maxWait time.Duration, gated bool) (int, error) {
	var gate client.Gate
	if gated {
		gate = client.NewLocalGate(sluice.TokenBucket(1000, time.Second))
	}
	return getThrough(url, gate, maxWait)
}

// getThrough sends a GET of url through a client.Transport of gate (none
// when nil) and a MaxWait of maxWait, on connections of its own, and
// returns the answer's status, its body closed.
func getThrough(url string, gate client.Gate, maxWait time.Duration) (int, error) {
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &client.Transport{Base: base, Gate: gate, Retry: client.RetryPolicy{MaxWait: maxWait}}
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
