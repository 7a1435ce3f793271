package failover_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Settle charges the primary with everything the fallback admitted and
// has not charged, on every key, for a program about to close: without it
// a restart after an outage forgets what the instance admitted, and the
// fleet admits it again.
func TestSettleChargesEveryAccount(t *testing.T) {
	r, check, charged := outage(t)
	const keys = 300
	admitted := int64(0)
	for i := range keys {
		c := check
		c.Key = fmt.Sprintf("k%d", i)
		if r.allow(t, c).Allowed {
			admitted++
		}
	}
	if admitted != keys || charged.Load() != 0 {
		t.Fatalf("during the outage: %d admitted, %d charged; want %d, 0", admitted, charged.Load(), keys)
	}
	// Still down: nothing is charged, the error says why, the accounts
	// stay open.
	if err := r.failover.Settle(context.Background()); err == nil || charged.Load() != 0 {
		t.Fatalf("Settle with the primary down: %v, %d charged; want an error, 0", err, charged.Load())
	}
	r.primary.Fail(nil)
	if err := r.failover.Settle(context.Background()); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	if charged.Load() != keys {
		t.Errorf("Settle charged %d units, want the %d admitted locally", charged.Load(), keys)
	}
	if err := r.failover.Settle(context.Background()); err != nil || charged.Load() != keys {
		t.Errorf("a second Settle: %v, %d charged in all; want nothing more", err, charged.Load())
	}
	// An ended context stops it.
	r.primary.Fail(errors.New("down"))
	r.clk.Advance(time.Hour)
	c := check
	c.Key = "late"
	r.allow(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.primary.Fail(nil)
	if err := r.failover.Settle(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Settle on an ended context: %v, want context.Canceled", err)
	}
}
