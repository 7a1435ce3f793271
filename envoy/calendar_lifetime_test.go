package envoy_test

import (
	"context"
	"sync"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// statusStore records, per key, the ResetAfter the store answered: how
// long the key's state lives (Redis gives the key that TTL, the memory
// store keeps it that long).
type statusStore struct {
	sluice.Store
	mu    sync.Mutex
	reset map[string]time.Duration
}

func (s *statusStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	err := s.Store.Apply(ctx, checks, out)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range checks {
		if c.Cost > 0 && i < len(out) {
			s.reset[c.Key] = out[i].ResetAfter
		}
	}
	return err
}

func lifetimeService(t *testing.T, at time.Time, rulesYAML string) (*envoy.Service, *statusStore) {
	t.Helper()
	rules, err := envoy.LoadRules("rules.yaml", []byte(rulesYAML))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(at))
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	st := &statusStore{Store: mem, reset: map[string]time.Duration{}}
	svc, err := envoy.NewService(sluice.NewLimiter(st), rules, envoy.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return svc, st
}

// A weekly rule counts each Unix week under a key of its own (":w<n>"),
// worth nothing once that week ends: its state lives about a week (the
// shortest sluice window that holds the Unix week), not for the longest
// (sluice.MaxFixedWindow, ~814 days, which kept ~100 past weeks' keys per
// descriptor in Redis, TTL = ResetAfter, and in the memory store).
func TestAUnixWeeksKeyLivesAboutAWeek(t *testing.T) {
	at := time.Date(2026, time.December, 6, 11, 0, 0, 0, time.UTC)
	svc, st := lifetimeService(t, at, `
domain: cal
descriptors:
  - key: user
    rate_limit: {unit: week, requests_per_unit: 100}
`)
	resp, err := svc.ShouldRateLimit(context.Background(), request("cal", 0, desc("user", "alice")))
	if err != nil {
		t.Fatal(err)
	}
	week := 7 * 24 * time.Hour
	left := resp.Statuses[0].GetDurationUntilReset().AsDuration()
	for key, ttl := range st.reset {
		if ttl > left+week {
			t.Errorf("key %s of a weekly rule lives %v (%.0f days); its Unix week ends in %v", key, ttl, ttl.Hours()/24, left)
		}
	}
	if len(st.reset) == 0 {
		t.Fatal("no check reached the store")
	}
}

// A limit override whose window does not divide a day (7 minutes here)
// is counted the same way; the shortest sluice window that holds one of
// its Unix windows is hours long (about 3 hours in 2026, growing with the
// square root of the time since sluice.Epoch, as docs/envoy.md says), not
// ~814 days (~150,000 keys of one client).
func TestAnUnalignedOverrideWindowsKeyLivesHours(t *testing.T) {
	at := time.Date(2026, time.December, 6, 11, 0, 0, 0, time.UTC)
	svc, st := lifetimeService(t, at, "domain: ov\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 100}\n")
	d := desc("user", "alice")
	d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 10, Unit: typev3.RateLimitUnit_MINUTE, UnitMultiplier: wrapperspb.UInt32(7)}
	if _, err := svc.ShouldRateLimit(context.Background(), request("ov", 0, d)); err != nil {
		t.Fatal(err)
	}
	for key, ttl := range st.reset {
		if ttl > 3*time.Hour {
			t.Errorf("key %s of a 7-minute override lives %v (%.0f days)", key, ttl, ttl.Hours()/24)
		}
	}
	if len(st.reset) == 0 {
		t.Fatal("no check reached the store")
	}
}

// A client limited per week for 12 weeks leaves at most its current
// week's keys in the store after a sweep, not one per past week.
func TestWeeklyKeysDoNotPileUp(t *testing.T) {
	at := time.Date(2026, time.December, 6, 11, 0, 0, 0, time.UTC)
	rules, err := envoy.LoadRules("rules.yaml", []byte(`
domain: cal
descriptors:
  - key: user
    rate_limit: {unit: week, requests_per_unit: 100}
`))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(at))
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	svc, err := envoy.NewService(sluice.NewLimiter(mem), rules, envoy.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for range 12 {
		if _, err := svc.ShouldRateLimit(context.Background(), request("cal", 0, desc("user", "alice"))); err != nil {
			t.Fatal(err)
		}
		clock.Advance(7 * 24 * time.Hour)
	}
	mem.Sweep()
	if k := mem.Stats().Keys; k > 2 {
		t.Errorf("after 12 weeks of one weekly-limited client and a sweep, the store holds %d keys (one per past week)", k)
	}
}
