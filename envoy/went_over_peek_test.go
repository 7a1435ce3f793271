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
