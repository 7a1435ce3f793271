package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// script is a Base that answers attempt i (from 0) with answers[i] (the
// last one repeats), and records the bodies it was sent.
type script struct {
	mu      sync.Mutex
	answers []func() *http.Response
	bodies  []string
	n       int
}

func (s *script) RoundTrip(r *http.Request) (*http.Response, error) {
	var body string
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		body = string(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodies = append(s.bodies, body)
	i := min(s.n, len(s.answers)-1)
	s.n++
	resp := s.answers[i]()
	resp.Request = r
	return resp, nil
}

func (s *script) attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func answer(status int, kv ...string) func() *http.Response {
	return func() *http.Response {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("body"))}
	}
}

var (
	ok          = answer(200)
	unavailable = answer(503)
)

// fast makes backoff waits tiny, so that tests of counts run quickly.
var fast = client.RetryPolicy{BackoffBase: time.Millisecond, BackoffCap: 2 * time.Millisecond}

func do(t *testing.T, tr http.RoundTripper, method, body string, hdr ...string) (*http.Response, error) {
	t.Helper()
	return doCtx(context.Background(), tr, method, body, hdr...)
}

func doCtx(ctx context.Context, tr http.RoundTripper, method, body string, hdr ...string) (*http.Response, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, "http://api.example/v1/things", r)
	for i := 0; i < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

func TestRetryAfterIsHonouredThenTheRequestSucceeds(t *testing.T) {
	t.Parallel()
	base := &script{answers: []func() *http.Response{answer(429, "Retry-After", "1"), ok}}
	tr := &client.Transport{Base: base}
	start := time.Now()
	resp, err := do(t, tr, "GET", "")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if took := time.Since(start); took < time.Second || took > 3*time.Second {
		t.Errorf("took %v; Retry-After said 1s", took)
	}
	if s := tr.Stats(); s.Attempts != 2 || s.Retries != 1 || s.Throttled != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestWithoutHeadersBackoffRetriesUpToMaxRetries(t *testing.T) {
	t.Parallel()
	base := &script{answers: []func() *http.Response{unavailable}}
	p := fast
	p.MaxRetries = 2
	tr := &client.Transport{Base: base, Retry: p}
	resp, err := do(t, tr, "GET", "")
	if err != nil || resp.StatusCode != 503 {
		t.Fatalf("%v %v", resp, err)
	}
	if base.attempts() != 3 {
		t.Errorf("%d attempts, want MaxRetries+1 = 3", base.attempts())
	}
	base = &script{answers: []func() *http.Response{unavailable, unavailable, ok}}
	tr = &client.Transport{Base: base, Retry: fast}
	if resp, err := do(t, tr, "GET", ""); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	p.MaxRetries = -1
	base = &script{answers: []func() *http.Response{unavailable}}
	if resp, _ := do(t, &client.Transport{Base: base, Retry: p}, "GET", ""); resp.StatusCode != 503 || base.attempts() != 1 {
		t.Errorf("MaxRetries -1: %d attempts", base.attempts())
	}
}

func TestOnlyRequestsSafeToRepeatAreRetried(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		method   string
		body     string
		hdr      []string
		policy   func(*client.RetryPolicy)
		attempts int
	}{
		{"GET is retried", "GET", "", nil, nil, 2},
		{"DELETE is retried", "DELETE", "", nil, nil, 2},
		{"PUT is retried with its body", "PUT", "payload", nil, nil, 2},
		{"POST is not retried", "POST", "payload", nil, nil, 1},
		{"POST with an Idempotency-Key is retried", "POST", "payload", []string{"Idempotency-Key", "8e03978e"}, nil, 2},
		{"POST is retried when told to", "POST", "payload", nil, func(p *client.RetryPolicy) { p.RetryNonIdempotent = true }, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := &script{answers: []func() *http.Response{unavailable, ok}}
			p := fast
			if c.policy != nil {
				c.policy(&p)
			}
			resp, err := do(t, &client.Transport{Base: base, Retry: p}, c.method, c.body, c.hdr...)
			if err != nil {
				t.Fatal(err)
			}
			if base.attempts() != c.attempts {
				t.Errorf("%d attempts, want %d (last status %d)", base.attempts(), c.attempts, resp.StatusCode)
			}
			for i, b := range base.bodies {
				if b != c.body {
					t.Errorf("attempt %d sent body %q, want %q", i, b, c.body)
				}
			}
		})
	}
	t.Run("a body that cannot be read twice is not retried", func(t *testing.T) {
		base := &script{answers: []func() *http.Response{unavailable, ok}}
		req, _ := http.NewRequest("PUT", "http://api.example/x", nil)
		req.Body = io.NopCloser(strings.NewReader("stream"))
		resp, err := (&client.Transport{Base: base, Retry: fast}).RoundTrip(req)
		if err != nil || resp.StatusCode != 503 || base.attempts() != 1 {
			t.Errorf("%v %v after %d attempts", resp.StatusCode, err, base.attempts())
		}
	})
}

func TestRetryBudgetSparesAFailingServer(t *testing.T) {
	t.Parallel()
	base := &script{answers: []func() *http.Response{unavailable}}
	p := fast
	p.BudgetFloor, p.BudgetRatio, p.MaxRetries = 2, 1e-9, 5
	tr := &client.Transport{Base: base, Retry: p}
	for range 10 {
		do(t, tr, "GET", "")
	}
	s := tr.Stats()
	if s.Retries != 2 || s.Attempts != 12 || s.Unbudgeted != 10 {
		t.Errorf("10 requests to a dead server: %+v; want 2 retries in all", s)
	}
}

func TestWaitsBeyondMaxWaitAreNotBegun(t *testing.T) {
	t.Parallel()
	base := &script{answers: []func() *http.Response{answer(429, "Retry-After", "3600"), ok}}
	tr := &client.Transport{Base: base}
	start := time.Now()
	resp, err := do(t, tr, "GET", "")
	if err != nil || resp.StatusCode != 429 || base.attempts() != 1 {
		t.Fatalf("%v %v after %d attempts", resp, err, base.attempts())
	}
	// The next request to the host is held by the Retry-After: an hour is
	// beyond MaxWait, so it fails at once.
	_, err = do(t, tr, "GET", "")
	if !errors.Is(err, client.ErrWaitTooLong) {
		t.Fatalf("held request: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v", took)
	}
	if base.attempts() != 1 {
		t.Error("a held request was sent")
	}
}

func TestContextEndsEveryWait(t *testing.T) {
	t.Parallel()
	base := &script{answers: []func() *http.Response{answer(429, "Retry-After", "30"), ok}}
	tr := &client.Transport{Base: base}
	t.Run("cancelled during a retry's wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := doCtx(ctx, tr, "GET", "")
		if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
			t.Fatalf("%v after %v", err, time.Since(start))
		}
	})
	t.Run("cancelled while held", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := doCtx(ctx, tr, "GET", "")
		if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
			t.Fatalf("%v after %v", err, time.Since(start))
		}
	})
	t.Run("a deadline before the hold ends fails at once", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := doCtx(ctx, tr, "GET", "")
		// Waiting would end at the deadline, 5 s: failing at once takes
		// far less than 2 s even on a loaded machine.
		if !errors.Is(err, client.ErrWaitTooLong) || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
			t.Fatalf("%v after %v", err, time.Since(start))
		}
	})
	if base.attempts() != 1 {
		t.Errorf("%d attempts, want 1", base.attempts())
	}
}

// closeRecorder is a body that notes that it was closed.
type closeRecorder struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeRecorder) Close() error { c.closed.Store(true); return nil }

func TestGateErrors(t *testing.T) {
	t.Parallel()
	down := client.GateFunc(func(ctx context.Context, cost int64) error {
		return fmt.Errorf("test gate: %w", sluice.ErrStoreUnavailable)
	})
	base := &script{answers: []func() *http.Response{ok}}
	req, _ := http.NewRequest("PUT", "http://api.example/x", nil)
	body := &closeRecorder{Reader: strings.NewReader("x")}
	req.Body = body
	_, err := (&client.Transport{Base: base, Gate: down}).RoundTrip(req)
	if !errors.Is(err, sluice.ErrStoreUnavailable) || base.attempts() != 0 || !body.closed.Load() {
		t.Errorf("gate down: %v, %d attempts, body closed %v", err, base.attempts(), body.closed.Load())
	}
	resp, err := do(t, &client.Transport{Base: base, Gate: down, FailOpen: true}, "GET", "")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("gate down, fail open: %v %v", resp, err)
	}
	tooBig := client.NewLocalGate(sluice.GCRA(10, time.Second).WithBurst(2))
	_, err = do(t, &client.Transport{Base: base, Gate: tooBig, FailOpen: true,
		Cost: func(*http.Request) int64 { return 3 }}, "GET", "")
	if !errors.Is(err, client.ErrExceedsBurst) {
		t.Errorf("cost above the gate's burst: %v", err)
	}
}

// A gate over a memory store (as NewLocalGate's) gives 120 calls turns that
// keep to its limit in every stretch of time, and the Transport sends no
// call before its turn. The turns are the store's record, not the times
// the calls were sent: a loaded machine wakes a call past its turn, and
// calls woken late go together.
func TestLocalGatePacesExactly(t *testing.T) {
	t.Parallel()
	cases := map[string]sluice.Limit{
		"gcra":        sluice.GCRA(100, time.Second).WithBurst(5),
		"leaky queue": sluice.LeakyBucket(100, time.Second).WithBurst(5).WithMaxWait(10 * time.Second),
	}
	for name, l := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newRecordingStore()
			gate := client.NewLimiterGate(sluice.NewLimiter(store), "client", l)
			var mu sync.Mutex
			var times []time.Time
			rec := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				times = append(times, time.Now())
				mu.Unlock()
				return ok(), nil
			})
			tr := &client.Transport{Base: rec, Gate: gate}
			start := time.Now()
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 30 {
						if _, err := do(t, tr, "GET", ""); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			// 120 calls at 100/s with a burst of 5 cannot take less than 1.15 s.
			if took := time.Since(start); took < 1150*time.Millisecond {
				t.Errorf("120 calls took %v", took)
			}
			// No 200 ms stretch holds more than burst + 20 turns.
			turns := store.turns()
			if len(turns) != 120 {
				t.Fatalf("%d admitted turns, want 120", len(turns))
			}
			for i := range turns {
				n := 0
				for _, u := range turns[i:] {
					if u.Sub(turns[i]) < 200*time.Millisecond {
						n++
					}
				}
				if n > 5+20+2 {
					t.Fatalf("%d turns within 200ms", n)
				}
			}
			// No call is sent before its turn: the k-th call sent comes
			// no earlier than the k-th turn.
			slices.SortFunc(times, time.Time.Compare)
			for k := range times {
				if times[k].Before(turns[k]) {
					t.Fatalf("call %d sent %v before the %d-th turn", k, turns[k].Sub(times[k]), k)
				}
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
