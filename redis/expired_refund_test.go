package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// A receipt is refunded into neither store's state built after the state
// that counted it expired (state.lua's born; memory.Store.Refund). A
// request is charged under an hour's limit, and one under a second's
// limit of the same ID writes the state, which expires at the second's
// end still counting the first under the hour's limit. Past it, two
// requests under the second's limit build a fresh state, 2 of 2; the
// first receipt is then refunded under the hour's limit, and a third
// request in that second is refused by both stores.
func TestARefundAfterItsStateExpiredLeavesTheFreshStateAloneInBothStores(t *testing.T) {
	ctx := context.Background()
	client := redistest.Standalone(t).Client(t)
	mem := memory.New()
	t.Cleanup(func() { mem.Close() })
	stores := []struct {
		name  string
		store sluice.Store
	}{{"redis", redis.New(client, redis.WithTimeout(testTimeout))}, {"memory", mem}}
	hour := sluice.FixedWindow(2, time.Hour).Named("quota")
	second := sluice.FixedWindow(2, time.Second).Named("quota")
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	began := time.Now()
	key := fmt.Sprintf("refund-expired-%d", began.UnixNano())
	apply := func(store sluice.Store, l sluice.Limit) sluice.Status {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := store.Apply(ctx, []sluice.Check{{Key: key, Limit: l, Cost: 1}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	receipts := make([]int64, len(stores))
	for i, s := range stores {
		first := apply(s.store, hour)
		if !first.Allowed || first.Charged == 0 {
			t.Fatalf("%s: first request: %+v", s.name, first)
		}
		receipts[i] = first.Charged
		if st := apply(s.store, second); !st.Allowed {
			t.Fatalf("%s: second request: %+v", s.name, st)
		}
	}
	if time.Since(began) > 600*time.Millisecond {
		t.Skip("too slow to keep the charges in one second")
	}
	// Past the second's end (and its whole second, for the memory store).
	time.Sleep(time.Until(began.Truncate(time.Second).Add(1300 * time.Millisecond)))
	third := make([]bool, len(stores))
	for i, s := range stores {
		for j := range 2 {
			if st := apply(s.store, second); !st.Allowed {
				t.Fatalf("%s: request %d of the new second refused: %+v", s.name, j+1, st)
			}
		}
		if err := s.store.(sluice.Refunder).Refund(ctx, []sluice.Check{{Key: key, Limit: hour, Cost: 1}}, []int64{receipts[i]}); err != nil {
			t.Fatal(err)
		}
		third[i] = apply(s.store, second).Allowed
	}
	if time.Since(began.Truncate(time.Second)) > 1900*time.Millisecond || began.Truncate(time.Hour) != time.Now().Truncate(time.Hour) {
		t.Skip("too slow to keep the new charges in one second")
	}
	for i, s := range stores {
		if third[i] {
			t.Errorf("%s admitted a third request in a second limited to 2: the refund of a receipt from before the state's expiry was taken out of the state built since", s.name)
		}
	}
}
