package sluice_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// answerStore answers every call with its statuses (the first len(checks)),
// as a store that had decided them would, or fails with err.
type answerStore struct {
	statuses []sluice.Status
	err      error
}

func (s *answerStore) Apply(_ context.Context, checks []sluice.Check, out []sluice.Status) error {
	if s.err != nil {
		return s.err
	}
	copy(out, s.statuses)
	return nil
}

// A Decision reused from call to call holds the outcome of the last one
// only: the deciding limit, the violated ones, the statuses.
func TestReusedDecisionIsTheLastCall(t *testing.T) {
	ctx := context.Background()
	a, b := sluice.FixedWindow(1, time.Minute).Named("a"), sluice.FixedWindow(1, time.Hour).Named("b")
	two := []sluice.Check{{Key: "k", Limit: a, Cost: 1}, {Key: "k", Limit: b, Cost: 1}}
	var d sluice.Decision
	refusal := &answerStore{statuses: []sluice.Status{{RetryAfter: time.Second}, {RetryAfter: time.Minute}}}
	if err := sluice.NewLimiter(refusal).Allow(ctx, two, &d); err != nil || d.Allowed || len(d.Violated) != 2 || d.Limit.Name() != "b" {
		t.Fatalf("refusal: %+v, %v", d, err)
	}
	one := []sluice.Check{{Key: "k", Limit: sluice.GCRA(10, time.Second).Named("one"), Cost: 1}}
	admit := &answerStore{statuses: []sluice.Status{{Allowed: true, Remaining: 9, ResetAfter: 100 * time.Millisecond}}}
	if err := sluice.NewLimiter(admit).Allow(ctx, one, &d); err != nil {
		t.Fatal(err)
	}
	if !d.Allowed || len(d.Violated) != 0 || len(d.Statuses) != 1 || d.Limit.Name() != "one" ||
		d.Remaining != 9 || d.ResetAfter != 100*time.Millisecond || d.RetryAfter != 0 {
		t.Fatalf("admission after a refusal: %+v", d)
	}
}

// An error from the store is no decision, wrapped so that errors.Is finds
// it; a store that cannot release leases says so, and a call that took no
// lease has nothing to release.
func TestLimiterErrors(t *testing.T) {
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}
	var d sluice.Decision
	if err := sluice.NewLimiter(&answerStore{err: sluice.ErrStoreUnavailable}).Allow(ctx, checks, &d); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("failing store: %v, want ErrStoreUnavailable", err)
	}
	lim := sluice.NewLimiter(&answerStore{statuses: []sluice.Status{{Allowed: true, Lease: 7}}})
	if err := lim.Allow(ctx, checks, &d); err != nil {
		t.Fatal(err)
	}
	if err := lim.Release(ctx, checks, &d); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Release through a store that is no Releaser: %v, want an error wrapping errors.ErrUnsupported", err)
	}
	d.Statuses[0].Lease = 0
	if err := lim.Release(ctx, checks, &d); err != nil {
		t.Errorf("Release without a lease: %v", err)
	}
	bad := []sluice.Check{{Key: "", Limit: sluice.GCRA(1, time.Second), Cost: 1}}
	if err := lim.Allow(ctx, bad, &d); !errors.Is(err, sluice.ErrInvalidCheck) {
		t.Errorf("invalid check: %v, want ErrInvalidCheck", err)
	}
	for what, err := range map[string]error{"Allow": lim.Allow(ctx, checks, nil), "Wait": lim.Wait(ctx, checks, nil),
		"Release": lim.Release(ctx, checks, nil), "Refund": lim.Refund(ctx, checks, nil)} {
		if !errors.Is(err, sluice.ErrInvalidCheck) {
			t.Errorf("%s with a nil Decision: %v, want ErrInvalidCheck", what, err)
		}
	}
	// Checks other than those decided: an error, and the lease and the
	// receipt stay in the Decision, to be given back with the right checks.
	if err := lim.Allow(ctx, checks, &d); err != nil {
		t.Fatal(err)
	}
	d.Statuses[0].Charged = 3
	two := append(checks[:1:1], sluice.Check{Key: "k", Limit: sluice.PerMinute(5), Cost: 1})
	if err := lim.Release(ctx, two, &d); !errors.Is(err, sluice.ErrInvalidCheck) || d.Statuses[0].Lease != 7 {
		t.Errorf("Release of other checks: %v, lease %d; want ErrInvalidCheck, lease 7 kept", err, d.Statuses[0].Lease)
	}
	if err := lim.Refund(ctx, two, &d); !errors.Is(err, sluice.ErrInvalidCheck) || d.Statuses[0].Charged != 3 {
		t.Errorf("Refund of other checks: %v, charged %d; want ErrInvalidCheck, receipt 3 kept", err, d.Statuses[0].Charged)
	}
}

// Allow allocates nothing once the Decision's slices have grown, for one
// check and for a plan of three.
func TestAllowAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	plan := []sluice.Check{
		{Key: "k", Limit: sluice.PerSecond(10), Cost: 1},
		{Key: "k", Limit: sluice.PerMinute(100), Cost: 1},
		{Key: "*", Limit: sluice.PerHour(1000).Named("global"), Cost: 1},
	}
	lim := sluice.NewLimiter(&answerStore{statuses: make([]sluice.Status, 3)}) // refusals: Violated grows too
	for _, checks := range [][]sluice.Check{plan[:1], plan} {
		var d sluice.Decision
		if allocs := testing.AllocsPerRun(100, func() {
			if err := lim.Allow(ctx, checks, &d); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%d checks: %.1f allocations per Allow, want 0", len(checks), allocs)
		}
	}
}

// The zero Limiter, and one made with a nil Store, decides nothing: an
// error wrapping ErrStoreUnavailable, never a panic.
func TestZeroLimiterDecidesNothing(t *testing.T) {
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.PerMinute(1), Cost: 1}}
	for name, l := range map[string]*sluice.Limiter{"zero": {}, "nil store": sluice.NewLimiter(nil)} {
		var d sluice.Decision
		if err := l.Allow(ctx, checks, &d); !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("%s: Allow: %v, want ErrStoreUnavailable", name, err)
		}
		if err := l.Wait(ctx, checks, &d); !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("%s: Wait: %v, want ErrStoreUnavailable", name, err)
		}
		d = sluice.Decision{Allowed: true, Statuses: []sluice.Status{{Allowed: true, Lease: 1, Charged: 1}}}
		if err := l.Release(ctx, checks, &d); !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("%s: Release of a lease without a store: %v, want ErrStoreUnavailable", name, err)
		}
		if err := l.Refund(ctx, checks, &d); !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("%s: Refund of a charge without a store: %v, want ErrStoreUnavailable", name, err)
		}
	}
}

// A shadow limit never holds a call back: a shadow leaky-bucket queue's
// Delay is reported in its Status but is not the Decision's, which the
// middleware sleeps before the work proceeds.
func TestShadowQueueDelaysNothing(t *testing.T) {
	checks := []sluice.Check{
		{Key: "k", Limit: sluice.GCRA(10, time.Second), Cost: 1},
		{Key: "k", Limit: sluice.LeakyBucket(1, time.Second).WithMaxWait(time.Second).Named("trial").WithShadow(true), Cost: 1},
	}
	store := &answerStore{statuses: []sluice.Status{{Allowed: true, Remaining: 9}, {Allowed: true, Delay: time.Second}}}
	var d sluice.Decision
	if err := sluice.NewLimiter(store).Allow(context.Background(), checks, &d); err != nil {
		t.Fatal(err)
	}
	if !d.Allowed || d.Delay != 0 || d.Statuses[1].Delay != time.Second {
		t.Fatalf("allowed %v, delay %v (shadow status %v): want admitted at once, the shadow's 1s in its Status only",
			d.Allowed, d.Delay, d.Statuses[1].Delay)
	}
}
