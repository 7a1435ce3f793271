package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
)

// A failover Store whose primary cannot refund says so with an error
// wrapping errors.ErrUnsupported, as sluice.Limiter.Refund does, so that a
// caller can tell "this store never refunds" from a refund that failed.
func TestRefundOnAPrimaryThatCannotRefundIsUnsupported(t *testing.T) {
	primary, local := memory.New(), memory.New()
	t.Cleanup(func() { primary.Close(); local.Close() })
	f, err := failover.New(struct{ sluice.Store }{primary}, local, failover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1, time.Second), Cost: 1}}
	out := make([]sluice.Status, 1)
	if err := f.Apply(ctx, checks, out); err != nil || !out[0].Allowed {
		t.Fatalf("Apply: %+v, %v", out[0], err)
	}
	if err := f.Refund(ctx, checks, []int64{out[0].Charged}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Refund: %v, want an error wrapping errors.ErrUnsupported", err)
	}
}
