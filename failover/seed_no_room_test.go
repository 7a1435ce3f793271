package failover_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// Under the local fallback, a key met for the first time since the
// primary's last word on it is first brought down to its share of that
// word (seed). When the local store (memory, store.max_keys) has no room
// for that key's state, nothing can be brought down: the call is refused
// for want of room (sluice.Status.NoRoom), not decided from the whole
// share, and the word is kept to be started from once room comes back. A
// client the primary said had spent its hour's quota stays refused during
// the outage.
func TestASeedWithoutRoomKeepsThePrimarysLastWord(t *testing.T) {
	ctx := context.Background()
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	local := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0), memory.WithShards(1), memory.WithMaxKeys(1))
	t.Cleanup(func() { remote.Close(); local.Close() })
	flaky := &storetest.Flaky{Next: remote}
	f, err := failover.New(flaky, local, failover.Options{OnError: failover.Local, Breaker: failover.BreakerOptions{Clock: clk.Now}})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.FixedWindow(5, time.Hour).Named("per-hour")
	k := []sluice.Check{{Key: "k", Limit: lim, Cost: 1}}
	out := make([]sluice.Status, 1)
	for i := range 6 {
		if err := f.Apply(ctx, k, out); err != nil || out[0].Allowed != (i < 5) {
			t.Fatalf("request %d on the primary: %+v, %v", i, out[0], err)
		}
	}
	// The local store's one room holds another client's state, refusing.
	hog := sluice.FixedWindow(1, time.Hour).Named("hog")
	if err := local.Apply(ctx, []sluice.Check{{Key: "hog", Limit: hog, Cost: 1}}, out); err != nil || !out[0].Allowed {
		t.Fatalf("filling the local store: %+v, %v", out[0], err)
	}
	flaky.Fail(storetest.ErrRedisDown)
	if err := f.Apply(ctx, k, out); err != nil || out[0].Allowed || !out[0].NoRoom {
		t.Fatalf("k on the fallback, no room: %+v, %v; want refused for want of room", out[0], err)
	}
	local.Reset("hog", []sluice.Limit{hog}) // room comes back
	if err := f.Apply(ctx, k, out); err != nil || out[0].Allowed || out[0].NoRoom {
		t.Errorf("k on the fallback with room: %+v, %v; want refused by its limit: the primary's last word (0 of 5 left this hour) still holds", out[0], err)
	}
}
