package envoy_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// queueRules are a leaky-bucket queue of 10 a second (one turn every
// 100ms) beside a fixed window of 5 a minute.
const queueRules = `
domain: api
descriptors:
  - key: upload
    rate_limit: {unit: second, requests_per_unit: 10, algorithm: leaky-bucket, burst: 1, max_wait: 1s}
  - key: client
    rate_limit: {name: per-client, unit: minute, requests_per_unit: 5}
`

// lateQueueRules are queueRules with a queue of 10 a minute (one turn
// every 6s) that waits up to a minute: a call's deadline of lateDeadline
// falls well before its next turn, yet leaves a gRPC round trip time
// enough on a loaded machine (Envoy's 20ms would not).
const lateQueueRules = `
domain: api
descriptors:
  - key: upload
    rate_limit: {unit: minute, requests_per_unit: 10, algorithm: leaky-bucket, burst: 1, max_wait: 1m}
  - key: client
    rate_limit: {name: per-client, unit: minute, requests_per_unit: 5}
`

// lateDeadline is the deadline of a call whose turn in lateQueueRules'
// queue is 6s away.
const lateDeadline = 2 * time.Second

// askWithin sends req with a deadline timeout away and returns its answer
// and how long it took.
func (h *harness) askWithin(timeout time.Duration, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, time.Duration) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	begin := time.Now()
	resp, err := h.client.ShouldRateLimit(ctx, req)
	took := time.Since(begin)
	if err != nil {
		h.t.Fatalf("ShouldRateLimit within %v: %v, after %v", timeout, err, took)
	}
	return resp, took
}

// A request that a leaky-bucket queue admits with a turn after the call's
// deadline (Envoy's rate limit filter's timeout, 20ms by default) is
// answered OVER_LIMIT at once, as httplimit and grpclimit refuse such a
// turn, never with an error: Envoy lets a request through at once on an
// error (failure_mode_deny false, its default), which would release the
// whole queue undelayed. Its duration_until_reset and Retry-After are at
// least the delay, and observers are told it was limited.
func TestQueueTurnAfterTheDeadlineIsRefusedAtOnce(t *testing.T) {
	var observed envoy.Outcome
	var observedErr error
	h := serve(t, lateQueueRules, envoy.Options{Observer: func(res *envoy.Result, _ time.Duration, err error) {
		observed, observedErr = res.Descriptors[0], err
	}})
	u := desc("upload", "x")
	h.ask(request("api", 0, u)) // the burst: admitted at once
	// The next turn is 6s away (the clock stands still); the bucket is
	// full again 6s later.
	resp, took := h.askWithin(lateDeadline, request("api", 0, u))
	h.expect(resp, over, status{over, ":10/MINUTE", 0, 12 * time.Second})
	if got := headerText(resp.ResponseHeadersToAdd); !strings.Contains(got, "Retry-After: 6\n") {
		t.Errorf("headers:\n%swant a Retry-After of 6 (the 6s turn)", got)
	}
	if took >= 6*time.Second {
		t.Errorf("answered after %v: want at once, not at the turn (6s)", took)
	}
	if observedErr != nil || observed.Result != "limited" {
		t.Errorf("observers told %q, error %v; want limited, no error", observed.Result, observedErr)
	}
}

// A request refused for a queue turn after its deadline charges nothing
// that can be given back: a fixed window it counted gets its units back,
// and its descriptor reports OK with what the window holds uncharged, as
// in any refused request. (The queue's own turn stays spent: a bucket
// keeps no receipt.)
func TestQueueTurnAfterTheDeadlineGivesBackTheWindowsCharge(t *testing.T) {
	h := serve(t, lateQueueRules)
	u, c := desc("upload", "x"), desc("client", "c1")
	h.ask(request("api", 0, u, c)) // the burst: per-client counts 1
	resp, _ := h.askWithin(lateDeadline, request("api", 0, u, c))
	h.expect(resp, over,
		status{over, ":10/MINUTE", 0, 12 * time.Second},
		status{ok, "per-client:5/MINUTE", 4, time.Minute})
	h.expect(h.ask(request("api", 0, c)), ok, status{ok, "per-client:5/MINUTE", 3, time.Minute})
}

// A request whose queue turn starts before its deadline is answered OK
// when its turn comes, as one without a deadline is.
func TestQueueTurnBeforeTheDeadlineIsWaited(t *testing.T) {
	h := serve(t, queueRules)
	u := desc("upload", "x")
	h.ask(request("api", 0, u))
	resp, took := h.askWithin(5*time.Second, request("api", 0, u))
	h.expect(resp, ok, status{ok, ":10/SECOND", 0, 200 * time.Millisecond})
	if took < 100*time.Millisecond {
		t.Errorf("queued request answered after %v, want ≥ 100ms (its turn)", took)
	}
}

// A store that cannot give a charge back (no sluice.Refunder) leaves the
// request refused for its deadline counted: its window's descriptor
// reports what the window holds with the charge, and the service logs a
// warning.
func TestQueueTurnAfterTheDeadlineStaysCountedWhenTheRefundFails(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(queueRules))
	if err != nil {
		t.Fatal(err)
	}
	// The clock stands still: the queue's next turn stays 100ms away
	// however long the machine takes between the two requests.
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(start))
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	var logs bytes.Buffer
	svc, err := envoy.NewService(sluice.NewLimiter(struct{ sluice.Store }{mem}), rules,
		envoy.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	u, c := desc("upload", "x"), desc("client", "c1")
	if _, err := svc.ShouldRateLimit(context.Background(), request("api", 0, u, c)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	resp, err := svc.ShouldRateLimit(ctx, request("api", 0, u, c))
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetOverallCode() != over || statusOf(resp.Statuses[1]).remaining != 3 {
		t.Errorf("overall %v, per-client %+v: want OVER_LIMIT, per-client with 3 left (still counted)",
			resp.GetOverallCode(), statusOf(resp.Statuses[1]))
	}
	if !strings.Contains(logs.String(), "refund failed") {
		t.Errorf("logs %q: want a warning that the refund failed", logs.String())
	}
}
