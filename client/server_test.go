package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recordingStore is a memory store that notes the turn of every admitted
// decision, read from the clock the store decided with (its time, plus
// the delay a queue gave it): the exact record the "never above the limit
// in any window" assertions need.
//
// Its clock is the wall time at its start advanced by the monotonic clock,
// as memory's own clock is: the tests measure how long calls took with
// time.Since, which a step of the wall clock (a virtual machine resumed,
// NTP) does not move, so the decisions must not move with it either.
type recordingStore struct {
	mu       sync.Mutex
	inner    *memory.Store
	start    time.Time
	now      time.Time
	admitted []time.Time
	fail     atomic.Bool // answer ErrStoreUnavailable, to Apply and Refund
	// still, when not zero, is the time of every decision (see standStill).
	still time.Time
}

// standStill makes every later decision of s at stillAt, a clock that
// stands still, for tests that count a window aligned to the wall clock
// (a minute, an hour): on the wall clock, a window that ends between two
// calls admits its quantity again. The pacing tests, which compare turns
// with time.Now, keep the moving clock.
func (s *recordingStore) standStill() {
	s.mu.Lock()
	s.still = stillAt
	s.mu.Unlock()
}

// stillAt is the time of a recordingStore that stands still: 30 s into a
// minute and an hour.
var stillAt = time.Date(2026, time.January, 5, 10, 20, 30, 0, time.UTC)

func newRecordingStore() *recordingStore {
	s := &recordingStore{start: time.Now()}
	s.inner = memory.New(memory.WithClock(func() time.Time { return s.now }), memory.WithSweepInterval(0))
	return s
}

func (s *recordingStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if s.fail.Load() {
		return fmt.Errorf("test store: %w", sluice.ErrStoreUnavailable)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.still
	if s.now.IsZero() {
		s.now = s.start.Add(time.Since(s.start))
	}
	if err := s.inner.Apply(ctx, checks, out); err != nil {
		return err
	}
	var delay time.Duration
	for i := range checks {
		if !out[i].Allowed && !checks[i].Limit.Shadow() {
			return nil
		}
		delay = max(delay, out[i].Delay)
	}
	s.admitted = append(s.admitted, s.now.Add(delay))
	return nil
}

// turns returns the admitted decisions' turns, earliest first.
// Refund gives back charges as the memory store does (sluice.Refunder).
func (s *recordingStore) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	if s.fail.Load() {
		return fmt.Errorf("test store: %w", sluice.ErrStoreUnavailable)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.Refund(ctx, checks, charged)
}

func (s *recordingStore) turns() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.SortedFunc(slices.Values(s.admitted), time.Time.Compare)
}

// maxPerWindow is the most admissions in one window of length w aligned to
// sluice.Epoch, as fixed windows are.
func (s *recordingStore) maxPerWindow(w time.Duration) (most int, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	per := map[int64]int{}
	for _, t := range s.admitted {
		k := sluice.MicrosSinceEpoch(t) / int64(w/time.Microsecond)
		per[k]++
		most = max(most, per[k])
	}
	return most, len(s.admitted)
}

// sluiceServer is a real sluice server (config, memory store, proxy) in
// front of upstream: the embedded Server is its public listener, admin its
// admin listener, where apiToken's caller may check and choose plans.
type sluiceServer struct {
	*httptest.Server
	admin *httptest.Server
	store *recordingStore
}

// apiToken is the token of the test servers' decision API caller; the
// configuration holds its SHA-256.
const apiToken = "client-test-token"

const apiCaller = `
admin:
  callers:
    - {name: client-tests, token_sha256: 2add5b92210c49669fdd0d73cea822b53313d161280a69c5789c9b56f58bfa73, scopes: [check, override_plan]}
`

func newSluiceServer(t testing.TB, upstream http.Handler, cfgText string) *sluiceServer {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	cfg, err := config.Parse("client-test.yaml", []byte("upstream: "+up.URL+"\n"+cfgText+apiCaller))
	if err != nil {
		t.Fatal(err)
	}
	s := &sluiceServer{store: newRecordingStore()}
	srv, err := server.New(server.Options{Config: cfg, Store: s.store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(srv.PublicHandler())
	t.Cleanup(s.Server.Close)
	s.admin = httptest.NewServer(srv.AdminHandler())
	t.Cleanup(s.admin.Close)
	return s
}

// countingTransport sits under client.Transport and counts what really
// went over the wire.
type countingTransport struct {
	base                  http.RoundTripper
	sent, tooMany, failed atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.sent.Add(1)
	resp, err := c.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		c.tooMany.Add(1)
	}
	return resp, err
}

func newWire(t testing.TB) *countingTransport {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 64
	t.Cleanup(base.CloseIdleConnections)
	return &countingTransport{base: base}
}

// batch sends n GETs to url from workers goroutines through hc and
// returns how many ended in each status.
func batch(t testing.TB, hc *http.Client, url string, n, workers int) map[int]int {
	t.Helper()
	var next atomic.Int64
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				resp, err := hc.Get(url)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return statuses
}

const batchPlan = `
plans:
  batch:
    limits:
      - {name: per-second, algorithm: fixed-window, quantity: %d, window: 1s}
response:
  headers: [%s]
`

// The test: 1,000 calls through one Transport shared by 8
// goroutines, learning from the headers only, meet at most one 429, all
// succeed, and the server never admits more than its limit in a window.
func TestBatchLearnsFromHeadersWithoutTooManyRequests(t *testing.T) {
	const limit, calls, workers = 250, 1000, 8
	var hits atomic.Int64
	srv := newSluiceServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	}), fmt.Sprintf(batchPlan, limit, "ietf"))
	wire := newWire(t)
	tr := &client.Transport{Base: wire}
	start := time.Now()
	statuses := batch(t, &http.Client{Transport: tr}, srv.URL+"/items", calls, workers)
	elapsed := time.Since(start)

	if statuses[200] != calls {
		t.Errorf("statuses %v, want %d × 200", statuses, calls)
	}
	if n := wire.tooMany.Load(); n > 1 {
		t.Errorf("%d responses were 429, want at most 1", n)
	}
	if hits.Load() != calls {
		t.Errorf("upstream served %d requests, want %d", hits.Load(), calls)
	}
	most, admitted := srv.store.maxPerWindow(time.Second)
	if most > limit || admitted != calls {
		t.Errorf("server admitted %d (want %d), at most %d in one window (limit %d)", admitted, calls, most, limit)
	}
	t.Logf("%d calls in %v: %d sent, %d × 429, stats %+v", calls, elapsed.Round(time.Millisecond),
		wire.sent.Load(), wire.tooMany.Load(), tr.Stats())
}

// Every header format sluice can send teaches the Transport the same.
func TestBatchLearnsFromEveryHeaderFormat(t *testing.T) {
	for _, format := range []string{"draft-7", "draft-6", "legacy"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			const limit, calls = 100, 250
			srv := newSluiceServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
				fmt.Sprintf(batchPlan, limit, format))
			wire := newWire(t)
			tr := &client.Transport{Base: wire}
			start := time.Now()
			statuses := batch(t, &http.Client{Transport: tr}, srv.URL+"/items", calls, 8)
			if statuses[200] != calls || wire.tooMany.Load() > 1 {
				t.Errorf("statuses %v, %d × 429 on the wire", statuses, wire.tooMany.Load())
			}
			if most, _ := srv.store.maxPerWindow(time.Second); most > limit {
				t.Errorf("%d admitted in one window, limit %d", most, limit)
			}
			t.Logf("%d calls in %v, %d × 429", calls, time.Since(start).Round(time.Millisecond), wire.tooMany.Load())
		})
	}
}

// A batch that starts with its quota already spent meets one 429 (its
// first request's), then waits for the reset. A fixed window meets one
// more, once: the first request sent on the strength of a rate (stated by
// its policy, or seemingly proven by a reset) that a bucket would have
// admitted, after which the Transport waits for resets.
func TestBatchStartingWithASpentQuotaWaitsForTheReset(t *testing.T) {
	t.Parallel()
	const limit, calls = 50, 120
	srv := newSluiceServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		fmt.Sprintf(batchPlan, limit, "ietf"))
	spend := newWire(t)
	for spend.tooMany.Load() == 0 {
		resp, err := (&http.Client{Transport: spend}).Get(srv.URL + "/spend")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	wire := newWire(t)
	tr := &client.Transport{Base: wire}
	statuses := batch(t, &http.Client{Transport: tr}, srv.URL+"/items", calls, 8)
	if n := wire.tooMany.Load(); statuses[200] != calls || n < 1 || n > 2 {
		t.Errorf("statuses %v, %d × 429 on the wire; want all 200 after one or two 429s", statuses, n)
	}
	if most, _ := srv.store.maxPerWindow(time.Second); most > limit {
		t.Errorf("%d admitted in one window, limit %d", most, limit)
	}
}

// The controls: a plain transport meets a wall of 429s from the same kind
// of batch, and one that only honours Retry-After meets one per request in
// flight when the quota runs out (which learning avoids).
func TestWithoutLearningABatchMeetsTooManyRequests(t *testing.T) {
	t.Parallel()
	const limit, calls = 10, 60
	// The plain batch is decided at a clock that stands still, so however
	// slowly a loaded machine sends it, it meets one window: its quota,
	// then 429s.
	walled := newSluiceServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		fmt.Sprintf(batchPlan, limit, "ietf"))
	walled.store.standStill()
	plain := newWire(t)
	statuses := batch(t, &http.Client{Transport: plain}, walled.URL+"/items", calls, 8)
	if statuses[200] != limit || statuses[429] != calls-limit || plain.tooMany.Load() != calls-limit {
		t.Errorf("plain transport: statuses %v, %d × 429 on the wire; want %d × 200 and %d × 429", statuses, plain.tooMany.Load(), limit, calls-limit)
	}
	srv := newSluiceServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		fmt.Sprintf(batchPlan, limit, "ietf"))
	wire := newWire(t)
	tr := &client.Transport{Base: wire, IgnoreRemaining: true, Retry: client.RetryPolicy{MaxRetries: -1}}
	statuses = batch(t, &http.Client{Transport: tr}, srv.URL+"/items", calls, 8)
	if wire.tooMany.Load() < 2 {
		t.Errorf("Retry-After only: statuses %v, %d × 429 on the wire", statuses, wire.tooMany.Load())
	}
	t.Logf("plain: %d × 429; Retry-After only: %d × 429", plain.tooMany.Load(), wire.tooMany.Load())
}

// With a local Gate slower than the server's limit, the server never has
// to refuse: zero 429s.
func TestLocalGateMeetsNoTooManyRequests(t *testing.T) {
	t.Parallel()
	const limit, calls = 250, 300
	srv := newSluiceServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		fmt.Sprintf(batchPlan, limit, "ietf"))
	wire := newWire(t)
	// 200/s with a burst of 10 admits at most 210 in any second: below 250
	// even when network delays shift a few into the next window.
	tr := &client.Transport{Base: wire, Gate: client.NewLocalGate(sluice.GCRA(200, time.Second).WithBurst(10))}
	start := time.Now()
	statuses := batch(t, &http.Client{Transport: tr}, srv.URL+"/items", calls, 8)
	took := time.Since(start)
	if statuses[200] != calls || wire.tooMany.Load() != 0 {
		t.Errorf("statuses %v, %d × 429 on the wire; want none", statuses, wire.tooMany.Load())
	}
	if min := time.Duration(calls-10) * time.Second / 200; took < min {
		t.Errorf("%d calls took %v, less than the gate allows (%v)", calls, took, min)
	}
	t.Logf("%d calls in %v, stats %+v", calls, took.Round(time.Millisecond), tr.Stats())
}

const sharedPlan = `
plans:
  shared:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 100, window: 1s, burst: 5}
`

// A Gate that asks a sluice server's decision API paces calls to another
// service: the budget is shared by every process that uses the subject.
func TestDecisionAPIGatePacesCallsToAnotherService(t *testing.T) {
	t.Parallel()
	srv := newSluiceServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), sharedPlan)
	var mu sync.Mutex
	var arrivals []time.Time
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
	}))
	t.Cleanup(other.Close)
	api := newWire(t)
	gate := client.New(srv.admin.URL, client.WithToken(apiToken), client.WithHTTPClient(&http.Client{Transport: api})).Gate(client.CheckRequest{Subject: "nightly-export"})
	// Two workers' Transports, as two processes would have, share the subject.
	var wg sync.WaitGroup
	const calls = 100
	start := time.Now()
	for range 2 {
		wire := newWire(t)
		tr := &client.Transport{Base: wire, Gate: gate}
		wg.Go(func() {
			if st := batch(t, &http.Client{Transport: tr}, other.URL+"/export", calls, 4); st[200] != calls {
				t.Errorf("statuses %v", st)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if _, admitted := srv.store.maxPerWindow(time.Second); admitted != 2*calls {
		t.Errorf("the decision API admitted %d, want %d", admitted, 2*calls)
	}
	// 200 calls at 100/s with a burst of 5 take at least 1.95 s; no second
	// of arrivals holds more than burst + rate (+3 for network jitter).
	if took < 1950*time.Millisecond {
		t.Errorf("200 calls took %v", took)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range arrivals {
		n := 0
		for _, a := range arrivals {
			if !a.Before(arrivals[i]) && a.Sub(arrivals[i]) < time.Second {
				n++
			}
		}
		if n > 5+100+3 {
			t.Fatalf("%d calls arrived within one second", n)
		}
	}
	t.Logf("200 calls in %v, %d decision API calls", took.Round(time.Millisecond), api.sent.Load())
}

// Settle reports the answer to a request Check admitted: the server keeps
// of its 40 reserved tokens the 10 the answer says it used; an id settled
// once is an APIError of status 404 the second time.
func TestSettleKeepsWhatTheAnswerReports(t *testing.T) {
	s := newSluiceServer(t, http.NotFoundHandler(), `
plans:
  free:
    limits: [{name: tokens, algorithm: fixed-window, quantity: 100, window: 1h, count: "header:X-Usage-Tokens"}]
    costs: {"POST /v1/complete": 40}
`)
	s.store.standStill()
	c := client.New(s.admin.URL, client.WithToken(apiToken))
	ctx := context.Background()
	d, err := c.Check(ctx, client.CheckRequest{Subject: "batch", Method: "POST", Path: "/v1/complete"})
	if err != nil || !d.Allowed || d.Settle == "" {
		t.Fatalf("check: %+v, %v; want admitted with a settle id", d, err)
	}
	if err := c.Settle(ctx, d.Settle, http.StatusOK, http.Header{"X-Usage-Tokens": {"10"}}); err != nil {
		t.Fatal(err)
	}
	var apiErr *client.APIError
	if err := c.Settle(ctx, d.Settle, http.StatusOK, nil); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Errorf("settling twice: %v, want an APIError of status 404", err)
	}
	zero := int64(0)
	peek, err := c.Check(ctx, client.CheckRequest{Subject: "batch", Method: "POST", Path: "/v1/complete", Cost: &zero})
	if err != nil || peek.Remaining != 90 {
		t.Errorf("after a completion that used 10 of its 40: remaining %d (%v), want 90", peek.Remaining, err)
	}
}

// An answer whose header is larger than a settlement may carry (more than
// 256 fields, more than 64 KiB) is settled with the fields that fit, the
// shortest first: the counted header, a number, is among them.
func TestSettleOfAnAnswerWithAHugeHeaderKeepsWhatItReports(t *testing.T) {
	s := newSluiceServer(t, http.NotFoundHandler(), `
plans:
  free:
    limits: [{name: tokens, algorithm: fixed-window, quantity: 100, window: 1h, count: "header:X-Usage-Tokens"}]
    costs: {"POST /v1/complete": 40}
`)
	s.store.standStill()
	c := client.New(s.admin.URL, client.WithToken(apiToken))
	ctx := context.Background()
	header := http.Header{"X-Usage-Tokens": {"10"}, "Content-Security-Policy": {strings.Repeat("a", 70<<10)}}
	for i := range 300 {
		header.Set(fmt.Sprintf("X-Trace-%03d", i), strings.Repeat("b", 100))
	}
	d, err := c.Check(ctx, client.CheckRequest{Subject: "batch", Method: "POST", Path: "/v1/complete"})
	if err != nil || !d.Allowed || d.Settle == "" {
		t.Fatalf("check: %+v, %v; want admitted with a settle id", d, err)
	}
	if err := c.Settle(ctx, d.Settle, http.StatusOK, header); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	peek, err := c.Check(ctx, client.CheckRequest{Subject: "batch", Method: "POST", Path: "/v1/complete", Cost: &zero})
	if err != nil || peek.Remaining != 90 {
		t.Errorf("after a completion that used 10 of its 40: remaining %d (%v), want 90", peek.Remaining, err)
	}
}

// A settlement whose refund the server's store failed is an APIError of
// status 503, and its id is spent: settling it again is a 404.
func TestSettleOfAFailedRefundIsSpent(t *testing.T) {
	s := newSluiceServer(t, http.NotFoundHandler(), `
plans:
  free:
    limits: [{name: tokens, algorithm: fixed-window, quantity: 100, window: 1h, count: "header:X-Usage-Tokens"}]
    costs: {"POST /v1/complete": 40}
`)
	s.store.standStill()
	c := client.New(s.admin.URL, client.WithToken(apiToken))
	ctx := context.Background()
	d, err := c.Check(ctx, client.CheckRequest{Subject: "batch", Method: "POST", Path: "/v1/complete"})
	if err != nil || !d.Allowed || d.Settle == "" {
		t.Fatalf("check: %+v, %v; want admitted with a settle id", d, err)
	}
	s.store.fail.Store(true)
	var apiErr *client.APIError
	err = c.Settle(ctx, d.Settle, http.StatusOK, http.Header{"X-Usage-Tokens": {"10"}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("settling with the store down: %v, want an APIError of status 503", err)
	}
	s.store.fail.Store(false)
	if err := c.Settle(ctx, d.Settle, http.StatusOK, nil); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Errorf("settling again: %v, want an APIError of status 404", err)
	}
}
