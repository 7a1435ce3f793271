package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A call never evicts the states it decides, but a key's other states are
// evicted as any other key's: one key checked in turn under many limits
// (a limit per route, an Envoy limit override per window) stays within
// the bound. The whole key was kept from eviction, so each call added a
// state above the bound, without end.
func TestOneKeyUnderManyLimitsStaysWithinTheBound(t *testing.T) {
	const maxKeys = 16
	for _, l := range []sluice.Limit{sluice.FixedWindow(10, time.Hour), sluice.SlidingLog(10, time.Hour)} {
		store, _, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(maxKeys), memory.WithSweepInterval(0))
		ctx := context.Background()
		out := make([]sluice.Status, 1)
		for i := range 100 {
			c := sluice.Check{Key: "k", Limit: l.Named(fmt.Sprint("route-", i)), Cost: 1}
			if err := store.Apply(ctx, []sluice.Check{c}, out); err != nil || !out[0].Allowed {
				t.Fatalf("%v, call %d: %+v, %v", l.Algorithm(), i, out[0], err)
			}
			if st := store.Stats(); st.Keys > maxKeys {
				t.Fatalf("%v: after %d limits on one key, %d states held, above the bound of %d", l.Algorithm(), i+1, st.Keys, maxKeys)
			}
		}
		// The call's own state is kept: the last limit still counts its unit.
		c := sluice.Check{Key: "k", Limit: l.Named("route-99")}
		if err := store.Apply(ctx, []sluice.Check{c}, out); err != nil || out[0].Remaining != 9 {
			t.Errorf("%v: the last limit's state: %+v, %v; want 9 left", l.Algorithm(), out[0], err)
		}
	}
}
