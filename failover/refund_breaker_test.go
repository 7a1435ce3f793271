package failover_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// hangingRefunder is a flaky primary that refunds on its remote store, and
// whose Refund, like its Apply, waits for its context while it hangs.
type hangingRefunder struct {
	*storetest.Flaky
	remote  *memory.Store
	refunds atomic.Int64
}

func (s *hangingRefunder) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	s.refunds.Add(1)
	if s.Hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.remote.Refund(ctx, checks, charged)
}

// While the breaker keeps calls away from a primary that hangs, a refund
// of a charge the primary made does not wait for it either (during an
// outage, every request whose answer refunds it waited the whole timeout):
// the charge stays counted there, and the error says so.
func TestRefundSkipsAPrimaryBehindAnOpenBreaker(t *testing.T) {
	r := newFailoverRig(t, failover.Options{})
	primary := &hangingRefunder{Flaky: r.primary, remote: r.remote}
	f := mustFailover(primary, r.local, failover.Options{Timeout: time.Second, Breaker: failover.BreakerOptions{Clock: r.clk.Now}})
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(10, time.Minute), Cost: 1}}
	out := make([]sluice.Status, 1)
	if err := f.Apply(ctx, checks, out); err != nil || !out[0].Allowed || out[0].Charged == 0 {
		t.Fatalf("on the primary: %+v, %v", out[0], err)
	}
	receipt := out[0].Charged
	r.primary.Fail(storetest.ErrRedisDown)
	for range failover.DefaultBreakerFailures {
		if err := f.Apply(ctx, []sluice.Check{{Key: "k", Limit: checks[0].Limit}}, out); err != nil {
			t.Fatal(err)
		}
	}
	if st := f.Stats(); st.Breaker != failover.BreakerOpen {
		t.Fatalf("stats %+v, want open", st)
	}
	primary.Hang = true
	start := time.Now()
	err := f.Refund(ctx, checks, []int64{receipt})
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Refund took %v: it waited for a primary behind an open breaker", took)
	}
	if !errors.Is(err, failover.ErrCircuitOpen) {
		t.Errorf("Refund: %v, want an error wrapping ErrCircuitOpen (the charge stays counted)", err)
	}
	if n := primary.refunds.Load(); n != 0 {
		t.Errorf("the primary was asked to refund %d times behind an open breaker", n)
	}
}
