package overlimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// A Cache over a store that cannot refund says so with an error wrapping
// errors.ErrUnsupported, as sluice.Limiter.Refund does, so that a caller
// can tell "this store never refunds" from a refund that failed.
func TestRefundOverAStoreThatCannotRefundIsUnsupported(t *testing.T) {
	mem := memory.New()
	t.Cleanup(func() { mem.Close() })
	c := overlimit.New(struct{ sluice.Store }{mem}, overlimit.Options{})
	checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1, time.Second), Cost: 1}}
	err := c.Refund(context.Background(), checks, []int64{1})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Refund: %v, want an error wrapping errors.ErrUnsupported", err)
	}
}

// A Cache over a store that cannot release leases says so with an error
// wrapping errors.ErrUnsupported, as sluice.Limiter.Release does.
func TestReleaseOverAStoreThatCannotReleaseIsUnsupported(t *testing.T) {
	mem := memory.New()
	t.Cleanup(func() { mem.Close() })
	c := overlimit.New(struct{ sluice.Store }{mem}, overlimit.Options{})
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}
	out := make([]sluice.Status, 1)
	if err := c.Apply(context.Background(), checks, out); err != nil || out[0].Lease == 0 {
		t.Fatalf("Apply: %+v, %v", out[0], err)
	}
	err := c.Release(context.Background(), checks, []int64{out[0].Lease})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Release: %v, want an error wrapping errors.ErrUnsupported", err)
	}
}
