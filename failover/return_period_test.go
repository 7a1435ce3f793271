package failover_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// switchPrimary is a primary that fails on demand and, while during is
// set, runs it first in every call (its decisions and its charges),
// deciding on a memory store otherwise.
type switchPrimary struct {
	next   sluice.Store
	mu     sync.Mutex
	err    error
	during func(ctx context.Context) error
	calls  atomic.Int64
}

func (s *switchPrimary) fail(err error) { s.mu.Lock(); s.err = err; s.mu.Unlock() }

func (s *switchPrimary) setDuring(fn func(ctx context.Context) error) {
	s.mu.Lock()
	s.during = fn
	s.mu.Unlock()
}

// hook runs during, if set.
func (s *switchPrimary) hook(ctx context.Context) error {
	s.mu.Lock()
	during := s.during
	s.mu.Unlock()
	if during != nil {
		return during(ctx)
	}
	return nil
}

func (s *switchPrimary) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.calls.Add(1)
	if err := s.hook(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.next.Apply(ctx, checks, out)
}

func (s *switchPrimary) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	return s.next.(sluice.Releaser).Release(ctx, checks, leases)
}

func (s *switchPrimary) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	return s.next.(sluice.Refunder).Refund(ctx, checks, charged)
}

// returnRig is a Local failover.Store around a switchPrimary, whose
// ChargeOnce takes nothing but runs the primary's during, and which
// records every reason given to OnFallback.
type returnRig struct {
	primary *switchPrimary
	f       *failover.Store
	mu      sync.Mutex
	reasons []error
}

func newReturnRig(t *testing.T) *returnRig {
	t.Helper()
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	local := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { remote.Close(); local.Close() })
	r := &returnRig{primary: &switchPrimary{next: remote}}
	f, err := failover.New(r.primary, local, failover.Options{
		Breaker:    failover.BreakerOptions{Clock: clk.Now},
		OnFallback: func(err error) { r.mu.Lock(); r.reasons = append(r.reasons, err); r.mu.Unlock() },
		ChargeOnce: func(ctx context.Context, _ []sluice.Check, _ []string) error {
			return r.primary.hook(ctx)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.f = f
	return r
}

// returnAfterOneFailure has one call of rate fail on the primary and be
// admitted locally, then has the primary answer again: the Store's next
// calls return (see failover.Store).
func (r *returnRig) returnAfterOneFailure(t *testing.T, rate sluice.Check) {
	t.Helper()
	r.primary.fail(storetest.ErrRedisDown)
	out := make([]sluice.Status, 1)
	if err := r.f.Apply(context.Background(), []sluice.Check{rate}, out); err != nil || !out[0].Allowed {
		t.Fatalf("local fallback: %+v, %v", out[0], err)
	}
	r.primary.fail(nil)
}

// giveUpDuringReturn applies checks with a ctx that is cancelled while
// the return call reaches the primary (here, charging what the fallback
// admitted), and wants the caller's error.
func (r *returnRig) giveUpDuringReturn(t *testing.T, checks ...sluice.Check) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.primary.setDuring(func(c context.Context) error { cancel(); <-c.Done(); return c.Err() })
	err := r.f.Apply(ctx, checks, make([]sluice.Status, len(checks)))
	r.primary.setDuring(nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a caller that gave up: %v, want context.Canceled", err)
	}
}

// Stats.ReturnRefusals, OnFallback's ErrReturning and the server's
// sluice_store_return_refusals_total count the calls this instance's share
// refuses while the Store returns to a primary that answers. A call of
// concurrency checks only, which a return call decides by the share alone,
// is a fallback when the share admits it, but no such refusal.
func TestAdmittedConcurrencyCallIsNotAReturnRefusal(t *testing.T) {
	r := newReturnRig(t)
	rate := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Minute).Named("rate"), Cost: 1}
	conc := sluice.Check{Key: "k", Limit: sluice.Concurrency(10, time.Minute).Named("inflight"), Cost: 1}
	r.returnAfterOneFailure(t, rate)

	out := make([]sluice.Status, 1)
	if err := r.f.Apply(context.Background(), []sluice.Check{conc}, out); err != nil {
		t.Fatal(err)
	}
	if !out[0].Allowed {
		t.Fatalf("the concurrency call was refused: %+v", out[0])
	}
	st := r.f.Stats()
	if st.ReturnRefusals != 0 {
		t.Errorf("Stats.ReturnRefusals = %d after a return call the share admitted; want 0", st.ReturnRefusals)
	}
	if st.FallbackDecisions != 2 {
		t.Errorf("Stats.FallbackDecisions = %d, want 2: the outage's call and the share's admission", st.FallbackDecisions)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reasons) != 2 {
		t.Fatalf("OnFallback told %v, want two reasons", r.reasons)
	}
	if reason := r.reasons[1]; reason == failover.ErrReturning || !errors.Is(reason, sluice.ErrStoreUnavailable) {
		t.Errorf("OnFallback told %q for an admitted call; want a reason other than ErrReturning, wrapping sluice.ErrStoreUnavailable", reason)
	}
}

// A call of concurrency checks only that the share refuses while the
// Store returns is a return refusal: ErrReturning, counted in
// Stats.ReturnRefusals.
func TestRefusedConcurrencyCallIsAReturnRefusal(t *testing.T) {
	r := newReturnRig(t)
	rate := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Minute).Named("rate"), Cost: 1}
	conc := sluice.Check{Key: "k", Limit: sluice.Concurrency(1, time.Minute).Named("inflight"), Cost: 1}
	r.returnAfterOneFailure(t, rate)

	out := make([]sluice.Status, 1)
	for i, want := range []bool{true, false} { // the one slot, then none
		if err := r.f.Apply(context.Background(), []sluice.Check{conc}, out); err != nil {
			t.Fatal(err)
		}
		if out[0].Allowed != want {
			t.Fatalf("call %d: %+v, want Allowed %v", i, out[0], want)
		}
	}
	if st := r.f.Stats(); st.ReturnRefusals != 1 {
		t.Errorf("Stats.ReturnRefusals = %d after one refusal by the share; want 1", st.ReturnRefusals)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if reason := r.reasons[len(r.reasons)-1]; reason != failover.ErrReturning {
		t.Errorf("OnFallback told %q for the share's refusal, want ErrReturning", reason)
	}
}

// sluice.Store.Apply: an error means no decision and nothing consumed. A
// caller that gives up during a return call gets its context's error, and
// the lease the share gave its concurrency check goes back: the caller has
// no Decision to release it with.
func TestGivenUpReturnCallReleasesItsLocalLease(t *testing.T) {
	r := newReturnRig(t)
	rate := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Minute).Named("rate"), Cost: 1}
	conc := sluice.Check{Key: "k", Limit: sluice.Concurrency(1, time.Hour).Named("inflight"), Cost: 1}
	r.returnAfterOneFailure(t, rate)
	r.giveUpDuringReturn(t, conc)

	out := make([]sluice.Status, 1)
	if err := r.f.Apply(context.Background(), []sluice.Check{conc}, out); err != nil {
		t.Fatal(err)
	}
	if !out[0].Allowed {
		t.Errorf("the only slot of Concurrency(1) is held by the lease of a call that returned an error: refused %+v", out[0])
	}
}

// The same for a rate check: the units the share gave a call whose caller
// gave up go back to it, and are not owed to the primary.
func TestGivenUpReturnCallRefundsItsLocalUnits(t *testing.T) {
	r := newReturnRig(t)
	rate := sluice.Check{Key: "k", Limit: sluice.FixedWindow(2, time.Hour).Named("rate"), Cost: 1}
	r.returnAfterOneFailure(t, rate) // 1 of 2 admitted locally, owed
	r.giveUpDuringReturn(t, rate)

	out := make([]sluice.Status, 1)
	if err := r.f.Apply(context.Background(), []sluice.Check{rate}, out); err != nil {
		t.Fatal(err)
	}
	if !out[0].Allowed {
		t.Errorf("the second unit of 2 is held by a call that returned an error: refused %+v", out[0])
	}
	if st := r.f.Stats(); st.ReturnRefusals != 0 {
		t.Errorf("Stats.ReturnRefusals = %d, want 0", st.ReturnRefusals)
	}
}
