package envoy_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
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

// peekless is a store whose peeks (a call with a check of cost 0) fail
// while down is set.
type peekless struct {
	*memory.Store
	down atomic.Bool
}

func (s *peekless) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	for _, c := range checks {
		if c.Cost == 0 && s.down.Load() {
			return errors.New("peek failed")
		}
	}
	return s.Store.Apply(ctx, checks, out)
}

// When the peek that reads the descriptors an over-limit cache did not
// evaluate (sluice.Status.Undecided) fails, what they hold is not known:
// the RateLimit header has no item for them, rather than r=0 for a limit
// the client has not touched, and their outcomes say no store decided
// them, so that nothing reads their Remaining as the limit's.
func TestACachedRefusalWhosePeekFailsTellsNoFiguresOfTheOthers(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(`
domain: api
descriptors:
  - key: tight
    rate_limit: {name: tight, unit: minute, requests_per_unit: 1}
  - key: loose
    rate_limit: {name: loose, unit: minute, requests_per_unit: 100}
`))
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return start }
	store := &peekless{Store: memory.New(memory.WithClock(now), memory.WithSweepInterval(0))}
	t.Cleanup(func() { store.Close() })
	cache := overlimit.New(store, overlimit.Options{Clock: now})
	var got []envoy.Outcome
	svc, err := envoy.NewService(sluice.NewLimiter(cache), rules, envoy.Options{Headers: httplimit.ModeIETF, Clock: now,
		Observer: func(res *envoy.Result, _ time.Duration, _ error) { got = append(got[:0], res.Descriptors...) }})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(ds ...*ratelimitv3.RateLimitDescriptor) *rlsv3.RateLimitResponse {
		t.Helper()
		resp, err := svc.ShouldRateLimit(context.Background(), request("api", 0, ds...))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	ask(desc("tight", "a"))
	if resp := ask(desc("tight", "a")); resp.OverallCode != over {
		t.Fatal("the store did not refuse the second request")
	}
	store.down.Store(true)
	saved := cache.Stats().RoundTripsSaved
	resp := ask(desc("tight", "a"), desc("loose", "b"))
	if cache.Stats().RoundTripsSaved == saved || resp.OverallCode != over {
		t.Fatalf("the over-limit cache did not refuse the request: %v", resp.OverallCode)
	}
	want := "RateLimit-Policy: \"tight\";q=1;w=60, \"loose\";q=100;w=60\nRateLimit: \"tight\";r=0;t=60\nRetry-After: 60\n"
	if h := headerText(resp.ResponseHeadersToAdd); h != want {
		t.Errorf("headers:\n%swant\n%s", h, want)
	}
	if len(got) != 2 || got[1].Result != "allowed" || !got[1].Unavailable || got[0].Unavailable {
		t.Errorf("outcomes %+v, want loose allowed and Unavailable, tight not", got)
	}
}
