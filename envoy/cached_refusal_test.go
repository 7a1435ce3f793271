package envoy_test

import (
	"fmt"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// A request that an over-limit cache refuses without asking the store
// reports the limit_remaining of its other descriptors as the store holds
// it, as envoyproxy/ratelimit does when its local cache refuses: every one
// of them, however many the request has.
func TestACachedRefusalReportsWhatEveryOtherLimitHolds(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(`
domain: api
descriptors:
  - key: tight
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: loose
    rate_limit: {unit: minute, requests_per_unit: 100}
`))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(start))
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	cache := overlimit.New(mem, overlimit.Options{Clock: clock.Now})
	svc, err := envoy.NewService(sluice.NewLimiter(cache), rules, envoy.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: clock, svc: svc, client: dial(t, svc)}
	h.expect(h.ask(request("api", 0, desc("tight", "a"))), ok, status{ok, ":1/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("api", 0, desc("tight", "a"))), over, status{over, ":1/MINUTE", 0, time.Minute})
	saved := cache.Stats().RoundTripsSaved
	ds := []*ratelimitv3.RateLimitDescriptor{desc("tight", "a")}
	for i := range 12 {
		ds = append(ds, desc("loose", fmt.Sprint(i)))
	}
	resp := h.ask(request("api", 0, ds...))
	if cache.Stats().RoundTripsSaved == saved {
		t.Fatal("the over-limit cache did not refuse the request")
	}
	h.expect(resp, over, status{over, ":1/MINUTE", 0, time.Minute})
	for i, st := range resp.Statuses[1:] {
		if got, want := statusOf(st), (status{ok, ":100/MINUTE", 100, time.Minute}); got != want {
			t.Errorf("descriptor %d: %+v, want %+v", i+1, got, want)
		}
	}
}
