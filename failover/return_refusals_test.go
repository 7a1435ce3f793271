package failover_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// One failure while the primary is up costs a return period, in which the
// calls beyond this instance's share are refused and counted as fallbacks:
// Stats tells them apart from those of an outage (ReturnRefusals), as
// OnFallback does by their reason, so that an operator can see why
// fallbacks go on while the store answers.
func TestRefusalsOfTheReturnPeriodAreCountedApart(t *testing.T) {
	r, _, _ := outage(t) // two instances: a share of 5 of 10
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
	r.allow(t, check) // the one failure
	r.primary.Fail(nil)
	for range 9 {
		r.allow(t, check)
	}
	r.mu.Lock()
	returning := 0
	for _, err := range r.fallbacks {
		if err == failover.ErrReturning {
			returning++
		}
	}
	all := len(r.fallbacks)
	r.mu.Unlock()
	st := r.failover.Stats()
	t.Logf("%d fallbacks, %d of them ErrReturning; ReturnRefusals %d", all, returning, st.ReturnRefusals)
	if returning == 0 || st.ReturnRefusals != int64(returning) {
		t.Errorf("ReturnRefusals %d, want the %d fallbacks reported as ErrReturning (of %d)", st.ReturnRefusals, returning, all)
	}
	if st.FallbackDecisions != int64(all) {
		t.Errorf("FallbackDecisions %d, want all %d", st.FallbackDecisions, all)
	}
}

// During a return period, a call this instance's share admits and the
// primary's over-limit cache refuses (a client the primary refused a
// moment ago, knocking again) is refused by the primary, as outside a
// return period: not by the share, so neither a fallback nor a return
// refusal, and not a reason to ask the primary, whose cache answered.
func TestACachedRefusalInTheReturnPeriodIsThePrimarysDecision(t *testing.T) {
	ctx := context.Background()
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	local := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { remote.Close(); local.Close() })
	flaky := &storetest.Flaky{Next: remote}
	cache := overlimit.New(flaky, overlimit.Options{Clock: clk.Now})
	var reported atomic.Int64
	f, err := failover.New(cache, local, failover.Options{
		Instances:  2,
		Timeout:    time.Minute, // the cache's answers must not time out on a loaded machine
		Remember:   16,
		Breaker:    failover.BreakerOptions{Clock: clk.Now},
		OnFallback: func(error) { reported.Add(1) },
		ChargeOnce: func(context.Context, []sluice.Check, []string) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.FixedWindow(10, time.Hour)
	// Another instance spent k's whole quota on the primary.
	if err := remote.Apply(ctx, []sluice.Check{{Key: "k", Limit: lim, Cost: 10}}, make([]sluice.Status, 1)); err != nil {
		t.Fatal(err)
	}
	// One failure on another key, admitted locally: this instance returns.
	flaky.Fail(storetest.ErrRedisDown)
	out := make([]sluice.Status, 1)
	if err := f.Apply(ctx, []sluice.Check{{Key: "x", Limit: lim, Cost: 1}}, out); err != nil || !out[0].Allowed {
		t.Fatalf("local fallback: %+v, %v", out[0], err)
	}
	flaky.Fail(nil)
	k := []sluice.Check{{Key: "k", Limit: lim, Cost: 1}}
	// The primary refuses k, and its cache remembers.
	if err := f.Apply(ctx, k, out); err != nil || out[0].Allowed {
		t.Fatalf("first knock: %+v, %v; want the primary's refusal", out[0], err)
	}
	// Other keys' answers (more than Remember) push k's last word out: k's
	// share admits it again.
	for i := range 100 {
		other := []sluice.Check{{Key: fmt.Sprint("other-", i), Limit: lim, Cost: 1}}
		if err := f.Apply(ctx, other, out); err != nil {
			t.Fatal(err)
		}
	}
	before, reached, saved := f.Stats(), flaky.Calls.Load(), cache.Stats().RoundTripsSaved
	if !before.Nodes[""].Returning {
		t.Fatal("not returning: the scenario did not happen")
	}
	reports := reported.Load()
	if err := f.Apply(ctx, k, out); err != nil || out[0].Allowed {
		t.Fatalf("second knock: %+v, %v; want a refusal", out[0], err)
	}
	after := f.Stats()
	if cache.Stats().RoundTripsSaved == saved {
		t.Fatal("the cache did not answer the second knock: the scenario did not happen")
	}
	if d := after.FallbackDecisions - before.FallbackDecisions; d != 0 {
		t.Errorf("FallbackDecisions grew by %d for the primary's refusal from its cache", d)
	}
	if d := after.ReturnRefusals - before.ReturnRefusals; d != 0 {
		t.Errorf("ReturnRefusals grew by %d for a call the share admitted", d)
	}
	if d := reported.Load() - reports; d != 0 {
		t.Errorf("OnFallback called %d times for the primary's refusal", d)
	}
	if d := flaky.Calls.Load() - reached; d != 0 {
		t.Errorf("%d calls reached the primary for a refusal its cache gave", d)
	}
}
