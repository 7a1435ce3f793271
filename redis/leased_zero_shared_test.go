package redis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// A Leased whose shared store has no connection (the zero Store, New(nil))
// does not panic: a take the shared state cannot answer (an error wrapping
// sluice.ErrStoreUnavailable) leaves the call to the store behind, as
// Leased's doc says; TestZeroValuesHaveNoStore holds the Store itself to it.
func TestLeasedOverAZeroStoreDoesNotPanic(t *testing.T) {
	for name, shared := range map[string]*redis.Store{"zero": {}, "New(nil)": redis.New(nil)} {
		t.Run(name, func(t *testing.T) {
			mem := memory.New()
			defer mem.Close()
			l := redis.NewLeased(mem, shared, 1, redis.LeaseOptions{Mode: redis.LeaseAuto})
			defer l.Close()
			// 10 a minute: a first take sized 8 is scarce (8 ≥ 10/2), so it
			// goes to lease_take.lua (Store.take).
			lim := sluice.FixedWindow(10, time.Minute)
			out := make([]sluice.Status, 1)
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Leased.Apply over a %s Store panicked: %v", name, r)
					}
				}()
				err = l.Apply(context.Background(), []sluice.Check{{Key: "k", Limit: lim, Cost: 1}}, out)
			}()
			if err != nil && !errors.Is(err, sluice.ErrStoreUnavailable) {
				t.Errorf("Apply: %v, want nil (decided by next) or ErrStoreUnavailable", err)
			}
		})
	}
}
