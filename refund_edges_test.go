package sluice_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Edge cases of Limiter.Refund: each pins a
// documented property that no other test exercised.

// "A refused decision charged nothing and refunds nothing": even one whose
// statuses carry a receipt (a Decision reused, or from a decorator), the
// store is not asked and the receipts stay.
func TestRefundOfARefusedDecisionReachesNoStore(t *testing.T) {
	store := &mapStore{now: 1_000_000_000, states: map[string]sluice.State{}}
	lim := sluice.NewLimiter(store)
	checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(3, time.Minute), Cost: 1}}
	d := sluice.Decision{Allowed: false, Statuses: []sluice.Status{{Allowed: true, Charged: 5}}}
	if err := lim.Refund(context.Background(), checks, &d); err != nil {
		t.Fatalf("Refund of a refused decision: %v, want nil", err)
	}
	if store.refunds != 0 || d.Statuses[0].Charged != 5 {
		t.Errorf("Refund of a refused decision reached the store (%d calls) or cleared its receipt (%d)", store.refunds, d.Statuses[0].Charged)
	}
}

// "checks must be those d was decided for: checks of another number are an
// error wrapping ErrInvalidCheck" — fewer checks than statuses as well as
// more; nothing is given back and the receipts stay in d.
func TestRefundWithAnotherNumberOfChecksIsInvalid(t *testing.T) {
	l := sluice.FixedWindow(3, time.Minute)
	for _, n := range []int{1, 3} {
		store := &mapStore{now: 1_000_000_000, states: map[string]sluice.State{}}
		lim := sluice.NewLimiter(store)
		d := sluice.Decision{Allowed: true, Statuses: []sluice.Status{{Allowed: true, Charged: 5}, {Allowed: true, Charged: 7}}}
		checks := make([]sluice.Check, n)
		for i := range checks {
			checks[i] = sluice.Check{Key: "k", Limit: l, Cost: 1}
		}
		err := lim.Refund(context.Background(), checks, &d)
		if !errors.Is(err, sluice.ErrInvalidCheck) {
			t.Errorf("%d checks for a decision of 2: %v, want an error wrapping ErrInvalidCheck", n, err)
		}
		if store.refunds != 0 || d.Statuses[0].Charged != 5 || d.Statuses[1].Charged != 7 {
			t.Errorf("%d checks for a decision of 2: store asked %d times, receipts %d and %d; want none asked and both kept",
				n, store.refunds, d.Statuses[0].Charged, d.Statuses[1].Charged)
		}
	}
}
