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
