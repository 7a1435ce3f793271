package overlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// hookedRefunder is a memory store that calls before at the start of each
// Refund, before it gives anything back.
type hookedRefunder struct {
	*memory.Store
	before func()
}

func (s *hookedRefunder) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	if s.before != nil {
		s.before()
	}
	return s.Store.Refund(ctx, checks, charged)
}

// A call refused by the store while a refund through the cache is on its
// way to the store describes the state before the refund: its denial must
// not outlive the refund, or the cache refuses what the store admits.
func TestOverLimitCacheForgetsADenialLearnedDuringARefund(t *testing.T) {
	clk := storetest.NewClock()
	mem := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer mem.Close()
	store := &hookedRefunder{Store: mem}
	lim := sluice.NewLimiter(overlimit.New(store, overlimit.Options{Clock: clk.Now}))
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(1, time.Hour), Cost: 1}
	ctx := context.Background()

	charged, err := allow(lim, ctx, check)
	if err != nil || !charged.Allowed {
		t.Fatalf("first call: %+v, %v; want admitted", charged, err)
	}
	store.before = func() {
		// Another request, while the refund is on its way: the store has
		// not given the unit back yet and refuses it.
		if d, err := allow(lim, ctx, check); err != nil || d.Allowed {
			t.Errorf("call during the refund: %+v, %v; want refused", d, err)
		}
	}
	if err := lim.Refund(ctx, []sluice.Check{check}, &charged); err != nil {
		t.Fatalf("Refund: %v", err)
	}
	store.before = nil
	if d, err := allow(lim, ctx, check); err != nil || !d.Allowed {
		t.Fatalf("call after the refund: allowed %v (RetryAfter %v), %v; the store admits it", d.Allowed, d.RetryAfter, err)
	}
}
