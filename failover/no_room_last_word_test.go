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

// A refusal for want of room is no last word on the key's use: the local
// fallback starts the key from its whole share, not from the refusal's
// Remaining 0.
//
// sluice.Status.NoRoom (check.go): "Allowed is false, nothing was counted
// or charged, and Remaining (0) and ResetAfter are no measure of the key's
// use". Kept as the key's last word (Remaining 0 until the key hogging the
// primary's room stops refusing, an hour here), it had the local store,
// which has room, refuse a client that used nothing of its 5 an hour, and
// the refusal no longer said NoRoom: it read as the client's own quota.
func TestANoRoomRefusalIsNotTheKeysLastWord(t *testing.T) {
	ctx := context.Background()
	clk := storetest.NewClock()
	primary := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(1))
	local := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer primary.Close()
	defer local.Close()
	flaky := &storetest.Flaky{Next: primary}
	f, err := failover.New(flaky, local, failover.Options{Breaker: failover.BreakerOptions{Clock: clk.Now}})
	if err != nil {
		t.Fatal(err)
	}
	l := sluice.FixedWindow(5, time.Hour)
	out := make([]sluice.Status, 1)
	// The primary's one unit of room is held by a key it refuses.
	if err := f.Apply(ctx, []sluice.Check{{Key: "hog", Limit: l, Cost: 5}}, out); err != nil || !out[0].Allowed {
		t.Fatalf("hog on the primary: %+v, %v", out[0], err)
	}
	victim := []sluice.Check{{Key: "victim", Limit: l, Cost: 1}}
	if err := f.Apply(ctx, victim, out); err != nil || out[0].Allowed || !out[0].NoRoom {
		t.Fatalf("victim on the full primary: %+v, %v; want a refusal for want of room", out[0], err)
	}
	flaky.Fail(storetest.ErrRedisDown)
	clk.Advance(time.Second)
	if err := f.Apply(ctx, victim, out); err != nil {
		t.Fatal(err)
	}
	if !out[0].Allowed {
		t.Errorf("victim, which has spent nothing, on the local fallback (which has room): %+v; "+
			"want admitted from its whole share of 5 (the primary's NoRoom refusal told nothing of its use)", out[0])
	}
}
