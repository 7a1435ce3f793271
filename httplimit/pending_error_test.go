package httplimit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// refundFails is a memory store whose refunds fail while down is set, as
// a store that cannot be reached fails them.
type refundFails struct {
	*memory.Store
	down    atomic.Bool
	refunds atomic.Int64 // refunds asked for, failed or not
}

func (s *refundFails) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	s.refunds.Add(1)
	if s.down.Load() {
		return fmt.Errorf("refund: connection refused: %w", sluice.ErrStoreUnavailable)
	}
	return s.Store.Refund(ctx, checks, charged)
}

// A Pending whose refund the store fails says so: Settle returns the
// store's error (errors.Is finds it), and the charge stands. The Pending is
// settled all the same: settling it again asks the store nothing and
// returns nil, so no charge is ever given back twice.
func TestPendingSettleReportsAFailedRefund(t *testing.T) {
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	store := &refundFails{Store: memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))}
	t.Cleanup(func() { store.Close() })
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.FixedWindow(3, time.Minute).Named("fails"),
			sluice.SlidingLog(3, time.Minute).Named("wins"),
			sluice.SlidingCounter(100, time.Minute).Named("all"),
		}}},
		Count:  map[string]string{"fails": httplimit.CountFailures, "wins": httplimit.CountSuccesses},
		Clock:  clock.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := mw.DecideFor(ctx, httplimit.Requester{IP: netip.MustParseAddr("192.0.2.1")}, "GET", "/", 1)
	if err != nil || !res.Decision.Allowed {
		t.Fatalf("%v %+v", err, res)
	}
	p := mw.Keep(res)
	mw.Discard(res)
	store.down.Store(true)
	if err := p.Settle(ctx, 200, nil); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("Settle with the store down: %v, want an error wrapping sluice.ErrStoreUnavailable", err)
	}
	store.down.Store(false)
	if got := remaining(t, mw)["fails"]; got != 2 {
		t.Errorf("fails has %d left after a success whose refund failed, want 2 (the charge stands)", got)
	}
	asked := store.refunds.Load()
	if err := p.Settle(ctx, 200, nil); err != nil || store.refunds.Load() != asked {
		t.Errorf("settling again: %v after %d more refunds, want nil and none (settled already)", err, store.refunds.Load()-asked)
	}
	if got := remaining(t, mw)["fails"]; got != 2 {
		t.Errorf("fails has %d left after settling again, want 2", got)
	}
}
