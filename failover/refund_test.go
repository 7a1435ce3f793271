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
	"github.com/sluice-dev/sluice/overlimit"
)

// downStore is a primary that fails while down, and refunds what it
// charged.
type downStore struct {
	*memory.Store
	down atomic.Bool
}

func (s *downStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if s.down.Load() {
		return errors.New("primary down")
	}
	return s.Store.Apply(ctx, checks, out)
}

// A refund goes to the store that charged: the primary's through the
// over-limit cache (which forgets the refusal it remembered), a local
// decision's to the local store and out of the ledger, so that the primary
// is charged, when it returns, only what was not refunded.
func TestRefundGoesToTheStoreThatCharged(t *testing.T) {
	ctx := context.Background()
	// A still clock: the hour's window must not end between the calls.
	clk := storetest.NewClock()
	remote, local := memory.New(memory.WithClock(clk.Now)), memory.New(memory.WithClock(clk.Now))
	defer remote.Close()
	defer local.Close()
	primary := &downStore{Store: remote}
	var mu sync.Mutex
	var owed int64
	// Calls bounded by a minute: the primary is down only when down says
	// so, never by a loaded machine's delay past the default 50 ms.
	f := mustFailover(overlimit.New(primary, overlimit.Options{Clock: clk.Now}), local, failover.Options{
		Timeout: time.Minute,
		Breaker: failover.BreakerOptions{Clock: clk.Now},
		Charge: func(ctx context.Context, checks []sluice.Check) error {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range checks {
				owed += c.Cost
			}
			return nil
		},
	})
	lim := sluice.NewLimiter(f)
	l := sluice.FixedWindow(2, time.Hour)
	one := sluice.Check{Key: "k", Limit: l, Cost: 1}

	// On the primary: two admitted, refused, then both refunded.
	var ds [2]sluice.Decision
	for i := range ds {
		if d, err := allow(lim, ctx, one); err != nil || !d.Allowed {
			t.Fatalf("primary call %d: %+v, %v", i, d, err)
		} else {
			ds[i] = d
		}
	}
	if d, _ := allow(lim, ctx, one); d.Allowed {
		t.Fatal("a third call admitted on a quota of 2")
	}
	for i := range ds {
		if err := lim.Refund(ctx, []sluice.Check{one}, &ds[i]); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := allow(lim, ctx, one); err != nil || !d.Allowed || d.Remaining != 1 {
		t.Fatalf("after two refunds on the primary: %+v, %v; want admitted with 1 left (the cache forgot its refusal)", d, err)
	} else if err := lim.Refund(ctx, []sluice.Check{one}, &d); err != nil {
		t.Fatal(err)
	}

	// Locally: two admitted while the primary is down, one refunded.
	primary.down.Store(true)
	other := sluice.Check{Key: "j", Limit: l, Cost: 1}
	var local1 sluice.Decision
	for i := range 2 {
		d, err := allow(lim, ctx, other)
		if err != nil || !d.Allowed {
			t.Fatalf("local call %d: %+v, %v", i, d, err)
		}
		local1 = d
	}
	if err := lim.Refund(ctx, []sluice.Check{other}, &local1); err != nil {
		t.Fatal(err)
	}
	if d, err := allow(sluice.NewLimiter(local), ctx, sluice.Check{Key: "j", Limit: l}); err != nil || d.Remaining != 1 {
		t.Errorf("the local store after one of two refunded: %d left (%v), want 1", d.Remaining, err)
	}
	primary.down.Store(false)
	if _, err := allow(lim, ctx, sluice.Check{Key: "j", Limit: l}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if owed != 1 {
		t.Errorf("the primary was charged %d units for j on its return, want 1 (2 admitted, 1 refunded)", owed)
	}
}
