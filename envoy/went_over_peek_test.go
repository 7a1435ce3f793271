package envoy_test

import (
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

func retryAfterOf(resp *rlsv3.RateLimitResponse) string {
	for _, hv := range resp.ResponseHeadersToAdd {
		if hv.Key == "Retry-After" {
			return hv.Value
		}
	}
	return ""
}

// A request that peeks (hits_addend 0) at a fixed window that went over,
// and spends a unit of a sliding log with nothing left, is refused by both:
// the sliding log cannot take its unit for 60 s. That the window went over
// (and not merely filled) changes nothing of the sliding log's status: it
// is OVER_LIMIT, and Retry-After is the wait after which the same request
// is admitted, 60 s, not the window's 1 s.
func TestAPeekAtAWindowThatWentOverHidesNoOtherRefusal(t *testing.T) {
	h := serve(t, `domain: d
descriptors:
  - key: a
    rate_limit: {name: per-minute-log, unit: minute, requests_per_unit: 1, algorithm: sliding-log}
  - key: c
    rate_limit: {name: per-second, unit: second, requests_per_unit: 1}
`, envoy.Options{Headers: httplimit.ModeIETF})
	h.ask(request("d", 0, desc("a", "v"))) // the sliding log is spent for a minute
	h.ask(request("d", 0, desc("c", "v"))) // the fixed window is full for this second
	peekAndSpend := request("d", 0, withHits(desc("c", "v"), 0), withHits(desc("a", "v"), 1))

	for _, step := range []string{"the window full", "the window over"} {
		if step == "the window over" {
			h.ask(request("d", 0, desc("c", "v"))) // goes over the fixed window
		}
		resp := h.ask(peekAndSpend)
		if resp.OverallCode != over || resp.Statuses[1].Code != over {
			t.Errorf("%s: %v, the spent sliding log %v (%+v), want both OVER_LIMIT", step, resp.OverallCode,
				resp.Statuses[1].Code, statusOf(resp.Statuses[1]))
		}
		if got := retryAfterOf(resp); got != "60" {
			t.Errorf("%s: Retry-After %q, want 60: the sliding log admits the request only then\n%s", step, got,
				headerText(resp.ResponseHeadersToAdd))
		}
	}
}

// Beside a window that went over, a limit of another algorithm that the
// request's cost does not fit is refused with the wait for that cost, read
// from its state, as a decision of the request would tell it — through an
// over-limit cache too, which remembers the limit's refusal of a smaller
// cost. A sliding log of 2 per minute spent at 0 s and 30 s admits one
// unit at 60 s and two at 90 s: asked at 30 s, Retry-After is 30 for a
// cost of 1 and 60 for 2 (the log is whole again at 90 s in both cases).
// A block list that a request hits refuses it too (without Retry-After:
// no wait helps) and leaves the log's wait stated as well.
func TestAWentOverRefusalTellsOtherLimitsWaitForTheCost(t *testing.T) {
	const rules = `domain: d
descriptors:
  - key: a
    rate_limit: {name: log, unit: minute, requests_per_unit: 2, algorithm: sliding-log}
  - key: c
    rate_limit: {name: per-second, unit: second, requests_per_unit: 1}
  - key: blk
    rate_limit: {unit: minute, requests_per_unit: 0}
`
	for _, cached := range []bool{false, true} {
		loaded, err := envoy.LoadRules("rules.yaml", []byte(rules))
		if err != nil {
			t.Fatal(err)
		}
		clock := &fakeClock{}
		clock.us.Store(sluice.MicrosSinceEpoch(start))
		mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
		t.Cleanup(func() { mem.Close() })
		var store sluice.Store = mem
		if cached {
			store = overlimit.New(mem, overlimit.Options{Clock: clock.Now})
		}
		svc, err := envoy.NewService(sluice.NewLimiter(store), loaded, envoy.Options{Clock: clock.Now, Headers: httplimit.ModeIETF})
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{t: t, clock: clock, svc: svc, client: dial(t, svc)}
		h.ask(request("d", 0, desc("a", "v")))
		clock.Advance(30 * time.Second)
		h.ask(request("d", 0, desc("a", "v")))
		h.expect(h.ask(request("d", 0, desc("a", "v"))), over) // remembered by the cache, at cost 1
		h.ask(request("d", 0, desc("c", "v")))
		h.expect(h.ask(request("d", 0, desc("c", "v"))), over) // the window went over

		for cost, want := range map[uint64]string{1: "30", 2: "60"} {
			resp := h.ask(request("d", 0, withHits(desc("c", "v"), 0), withHits(desc("a", "v"), cost)))
			h.expect(resp, over, status{over, "per-second:1/SECOND", 0, time.Second}, status{over, "log:2/MINUTE", 0, time.Minute})
			if got := retryAfterOf(resp); got != want {
				t.Errorf("cached %v, cost %d: Retry-After %q, want %s\n%s", cached, cost, got, want, headerText(resp.ResponseHeadersToAdd))
			}
		}
		resp := h.ask(request("d", 0, desc("blk", "v"), desc("a", "v")))
		h.expect(resp, over, status{over, ":0/MINUTE", 0, 30 * time.Second}, status{over, "log:2/MINUTE", 0, time.Minute})
		if got, want := headerText(resp.ResponseHeadersToAdd), "RateLimit-Policy: \"log\";q=2;w=60\nRateLimit: \"log\";r=0;t=30\n"; got != want {
			t.Errorf("cached %v, a block list hit: headers\n%swant\n%s", cached, got, want)
		}
	}
}

// A leaky-bucket queue (max_wait) admits a request that does not fit at
// once with a delay. Beside a fixed window that went over, the queue is
// decided at the request's cost, and a queue that would admit the request
// is OK, as when the same request is decided (the window full, hits 1):
// Retry-After is the window's end, 1 s, not the 60 s the queue takes to
// drain.
func TestAQueueBesideAWindowThatWentOverAdmitsTheRequest(t *testing.T) {
	h := serve(t, `domain: d
descriptors:
  - key: q
    rate_limit: {name: queue, unit: minute, requests_per_unit: 1, algorithm: leaky-bucket, burst: 1, max_wait: 10m}
  - key: c
    rate_limit: {name: per-second, unit: second, requests_per_unit: 1}
`, envoy.Options{Headers: httplimit.ModeIETF})
	h.expect(h.ask(request("d", 0, desc("q", "v"))), ok) // the queue's burst: the next one waits its turn
	h.expect(h.ask(request("d", 0, desc("c", "v"))), ok) // the window is full

	for _, step := range []struct {
		name string
		hits uint64
	}{{"decided", 1}, {"a peek at the window that went over", 0}} {
		resp := h.ask(request("d", 0, withHits(desc("c", "v"), step.hits), withHits(desc("q", "v"), 1)))
		if resp.OverallCode != over || resp.Statuses[1].Code != ok {
			t.Errorf("%s: %v, the queue %v (%+v); want OVER_LIMIT, the queue OK", step.name, resp.OverallCode,
				resp.Statuses[1].Code, statusOf(resp.Statuses[1]))
		}
		if got := retryAfterOf(resp); got != "1" {
			t.Errorf("%s: Retry-After %q, want 1 (the window's end; the queue admits then)\n%s", step.name, got,
				headerText(resp.ResponseHeadersToAdd))
		}
	}
}

// A limit that an over-limit cache did not ask the store about, in the
// call that reads the waits beside a block list's refusal (the cache
// refused it for another limit it remembers refusing), is refused until
// it is whole again: its wait for the cost is unknown, and that one is
// enough.
func TestAWentOverRefusalRefusesALimitTheCacheDidNotAsk(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(`domain: d
descriptors:
  - key: a
    rate_limit: {name: log-a, unit: minute, requests_per_unit: 1, algorithm: sliding-log}
  - key: b
    rate_limit: {name: log-b, unit: minute, requests_per_unit: 1, algorithm: sliding-log}
  - key: blk
    rate_limit: {unit: minute, requests_per_unit: 0}
`))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(start))
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	cache := overlimit.New(mem, overlimit.Options{Clock: clock.Now})
	svc, err := envoy.NewService(sluice.NewLimiter(cache), rules, envoy.Options{Clock: clock.Now, Headers: httplimit.ModeIETF})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: clock, svc: svc, client: dial(t, svc)}
	h.expect(h.ask(request("d", 0, desc("a", "v"))), ok)
	h.expect(h.ask(request("d", 0, desc("b", "v"))), ok)
	clock.Advance(30 * time.Second)
	h.expect(h.ask(request("d", 0, desc("blk", "v"), desc("a", "v"))), over) // the cache remembers a's refusal

	resp := h.ask(request("d", 0, desc("blk", "v"), desc("a", "v"), desc("b", "v")))
	h.expect(resp, over, status{over, ":0/MINUTE", 0, 30 * time.Second},
		status{over, "log-a:1/MINUTE", 0, 30 * time.Second}, status{over, "log-b:1/MINUTE", 0, 30 * time.Second})
	if got := retryAfterOf(resp); got != "" {
		t.Errorf("Retry-After %q, want none: no wait helps a block list hit", got)
	}
}

// A request that a fixed window that went over (or a block list) refuses
// is refused by that even when the call that reads the waits of its other
// limits fails: those are refused until they are whole again. An error
// would be answered UNAVAILABLE, which Envoy's filter (failure_mode_deny
// false, its default) lets through.
func TestAWentOverRefusalStandsWhenTheCallForOtherWaitsFails(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(`domain: d
descriptors:
  - key: a
    rate_limit: {name: log, unit: minute, requests_per_unit: 1, algorithm: sliding-log}
  - key: c
    rate_limit: {name: per-second, unit: second, requests_per_unit: 1}
  - key: blk
    rate_limit: {unit: minute, requests_per_unit: 0}
`))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(start))
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	store := &failingCall{Store: mem}
	svc, err := envoy.NewService(sluice.NewLimiter(store), rules, envoy.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: clock, svc: svc, client: dial(t, svc)}
	h.expect(h.ask(request("d", 0, desc("a", "v"))), ok) // the log is spent for a minute
	h.expect(h.ask(request("d", 0, desc("c", "v"))), ok)
	h.expect(h.ask(request("d", 0, desc("c", "v"))), over) // the window went over

	for _, step := range []struct {
		name string
		req  *rlsv3.RateLimitRequest
		want status
	}{
		{"a peek at a window that went over", request("d", 0, withHits(desc("c", "v"), 0), withHits(desc("a", "v"), 1)),
			status{over, "per-second:1/SECOND", 0, time.Second}},
		{"a block list hit", request("d", 0, desc("blk", "v"), withHits(desc("a", "v"), 1)),
			status{over, ":0/MINUTE", 0, time.Minute}},
	} {
		store.calls.Store(0)
		store.fail.Store(2) // the peek is the first call, the one for the log's wait the second
		h.expect(h.ask(step.req), over, step.want, status{over, "log:1/MINUTE", 0, time.Minute})
		if n := store.calls.Load(); n < 2 {
			t.Errorf("%s: %d calls, want the second to have failed", step.name, n)
		}
	}
}
