package sluice_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
)

// mapStore decides with DecideBatch over a map at a clock of its own, and
// refunds with internal/algo.Refund: the least Refunder.
type mapStore struct {
	now     int64
	states  map[string]sluice.State
	refunds int
}

func stateKey(c *sluice.Check) string { return c.Key + "\x00" + c.Limit.ID() }

func (s *mapStore) Apply(_ context.Context, checks []sluice.Check, out []sluice.Status) error {
	states := make([]sluice.State, len(checks))
	for i := range checks {
		states[i] = s.states[stateKey(&checks[i])]
	}
	changed, err := sluice.DecideBatch(checks, states, s.now, out)
	if err != nil {
		return err
	}
	if changed {
		for i := range checks {
			s.states[stateKey(&checks[i])] = states[i]
		}
	}
	return nil
}

func (s *mapStore) Refund(_ context.Context, checks []sluice.Check, charged []int64) error {
	s.refunds++
	for i := range checks {
		c := &checks[i]
		l := c.Limit
		p, _ := algo.NewParams(algo.Kind(l.Algorithm()), l.Quantity(), int64(l.Window()/time.Microsecond), l.Burst(), 0)
		if charged[i] == 0 || !algo.Refundable(p.Kind) {
			continue
		}
		s.states[stateKey(c)] = sluice.State(algo.Refund(&p, algo.State(s.states[stateKey(c)]), charged[i], c.Cost))
	}
	return nil
}

// Refunding every admission of a limit leaves it as never used: what
// counting only the requests that failed needs. A bucket in the same call
// is not refunded (it cannot be exactly), a refunded Decision refunds
// nothing again, and a refusal has nothing to refund.
func TestRefundGivesBackWhatWasCharged(t *testing.T) {
	ctx := context.Background()
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(3, time.Minute),
		sluice.SlidingCounter(3, time.Minute),
		sluice.SlidingLog(3, time.Minute),
	} {
		t.Run(l.Algorithm().String(), func(t *testing.T) {
			store := &mapStore{now: 1_000_000_000, states: map[string]sluice.State{}}
			lim := sluice.NewLimiter(store)
			bucket := sluice.TokenBucket(10, time.Minute).Named("bucket")
			checks := []sluice.Check{{Key: "k", Limit: l, Cost: 1}, {Key: "k", Limit: bucket, Cost: 1}}
			var d sluice.Decision
			for i := range 10 {
				store.now += 1000
				if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
					t.Fatalf("call %d: %+v, %v; want each admitted once the last is refunded", i, d, err)
				}
				if d.Statuses[0].Charged == 0 || d.Statuses[1].Charged != 0 {
					t.Fatalf("call %d: receipts %d and %d, want one for %v alone", i, d.Statuses[0].Charged, d.Statuses[1].Charged, l.Algorithm())
				}
				if err := lim.Refund(ctx, checks, &d); err != nil {
					t.Fatal(err)
				}
				if d.Statuses[0].Charged != 0 {
					t.Fatalf("call %d: the receipt stays after Refund", i)
				}
				before := store.refunds
				if err := lim.Refund(ctx, checks, &d); err != nil || store.refunds != before {
					t.Fatalf("call %d: refunding twice reached the store (%v)", i, err)
				}
			}
			peek := []sluice.Check{{Key: "k", Limit: l}, {Key: "k", Limit: bucket}}
			if err := lim.Allow(ctx, peek, &d); err != nil || d.Statuses[0].Remaining != 3 || d.Statuses[1].Remaining != 0 {
				t.Errorf("after 10 refunded calls: %+v (%v), want %v full and the bucket spent", d.Statuses, err, l.Algorithm())
			}
			refused := []sluice.Check{{Key: "k", Limit: l, Cost: 1}, {Key: "k", Limit: bucket, Cost: 1}}
			if err := lim.Allow(ctx, refused, &d); err != nil || d.Allowed || d.Statuses[0].Charged != 0 {
				t.Errorf("a call the bucket refuses: %+v (%v), want refused with no receipt", d, err)
			}
		})
	}
}

// A refund of less than the charge gives back that many units and leaves
// the rest counted: a request admitted at 5 (all it may use) that used 2 is
// settled by refunding 3.
func TestRefundOfPartOfACharge(t *testing.T) {
	ctx := context.Background()
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(10, time.Minute),
		sluice.SlidingCounter(10, time.Minute),
		sluice.SlidingLog(10, time.Minute),
	} {
		t.Run(l.Algorithm().String(), func(t *testing.T) {
			store := &mapStore{now: 1_000_000_000, states: map[string]sluice.State{}}
			lim := sluice.NewLimiter(store)
			var d sluice.Decision
			if err := lim.Allow(ctx, []sluice.Check{{Key: "k", Limit: l, Cost: 5}}, &d); err != nil || !d.Allowed || d.Remaining != 5 {
				t.Fatalf("reserving 5 of 10: %+v, %v", d, err)
			}
			if err := lim.Refund(ctx, []sluice.Check{{Key: "k", Limit: l, Cost: 3}}, &d); err != nil {
				t.Fatal(err)
			}
			if err := lim.Allow(ctx, []sluice.Check{{Key: "k", Limit: l}}, &d); err != nil || d.Remaining != 8 {
				t.Errorf("after 3 of the 5 came back: remaining %d (%v), want 8", d.Remaining, err)
			}
		})
	}
}

// A store that cannot refund says so, with an error wrapping
// errors.ErrUnsupported, and a Decision with no receipt never asks it.
func TestRefundNeedsARefunder(t *testing.T) {
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1, time.Minute), Cost: 1}}
	d := sluice.Decision{Allowed: true, Statuses: []sluice.Status{{Allowed: true, Charged: 5}}}
	err := sluice.NewLimiter(&answerStore{}).Refund(ctx, checks, &d)
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "cannot refund") || d.Statuses[0].Charged != 5 {
		t.Errorf("Refund on a store without it: %v, receipt %d; want an error and the receipt kept", err, d.Statuses[0].Charged)
	}
	d.Statuses[0].Charged = 0
	if err := sluice.NewLimiter(&answerStore{}).Refund(ctx, checks, &d); err != nil {
		t.Errorf("Refund of nothing: %v", err)
	}
}
