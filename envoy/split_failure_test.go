package envoy_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// failingCall fails the call number fail (from 1) with
// sluice.ErrStoreUnavailable and passes the others to its store.
type failingCall struct {
	sluice.Store
	calls, fail atomic.Int64
}

func (s *failingCall) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if s.calls.Add(1) == s.fail.Load() {
		return fmt.Errorf("test: %w", sluice.ErrStoreUnavailable)
	}
	return s.Store.Apply(ctx, checks, out)
}

// A request decided in two calls (see TestARequestOfManyPeeksIsDecided)
// that one of them fails is answered Unavailable having spent nothing,
// as a request decided in one call.
func TestARequestInTwoCallsSpendsNothingWhenOneFails(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(apiRules))
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
	// 20 hits and 40 peeks: 100 checks, peeked at in two calls (1, 2),
	// then decided in two more (3, 4).
	var ds []*ratelimitv3.RateLimitDescriptor
	for i := range 20 {
		ds = append(ds, desc("client", fmt.Sprint("h", i)))
	}
	for i := range 40 {
		ds = append(ds, withHits(desc("client", fmt.Sprint("p", i)), 0))
	}
	for fail := int64(1); fail <= 4; fail++ {
		store.calls.Store(0)
		store.fail.Store(fail)
		_, err := h.client.ShouldRateLimit(context.Background(), request("api", 0, ds...))
		if grpcstatus.Code(err) != codes.Unavailable {
			t.Errorf("call %d failing: %v, want Unavailable", fail, err)
		}
	}
	store.fail.Store(0)
	h.expect(h.ask(request("api", 0, desc("client", "h0"))), ok, status{ok, "per-client:5/MINUTE", 4, time.Minute})
}
