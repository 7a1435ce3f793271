package memory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A store keeps what it knows of every limit (ID and algorithm) it meets
// for as long as it lives. Limits whose ID follows a request (an Envoy
// descriptor's limit override names its window, which the caller chooses)
// must not grow that without a bound: beyond 16,384 limits, a check of a
// new one is an error the caller's store-error policy handles, and the
// limits already known are decided as before.
func TestALimitBeyondTheDefaultBoundIsAnError(t *testing.T) {
	store, _, _ := newStore(t, memory.WithMaxKeys(64), memory.WithSweepInterval(0))
	ctx := context.Background()
	out := make([]sluice.Status, 1)
	check := func(i int) error {
		l := sluice.FixedWindow(10, time.Minute).WithID(fmt.Sprintf("override-%d", i))
		return store.Apply(ctx, []sluice.Check{{Key: "k", Limit: l, Cost: 1}}, out)
	}
	const bound = 1 << 14
	for i := range bound {
		if err := check(i); err != nil {
			t.Fatalf("limit %d of %d: %v", i+1, bound, err)
		}
	}
	err := check(bound)
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("limit %d: error %v, want one wrapping sluice.ErrStoreUnavailable", bound+1, err)
	}
	if err := check(0); err != nil || !out[0].Allowed {
		t.Fatalf("a known limit after the bound was met: %v, %+v; want it decided and allowed", err, out[0])
	}
}
