package failover_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// Options.Remember bounds how many keys' last answers from the primary a
// Store keeps to start its fallback from; a key past it falls back to its
// whole share. With Remember 4, after the primary answered 64 keys (each
// now spent), at most 4 of them start their fallback from that answer.
func TestRememberBoundsTheLastWordsKept(t *testing.T) {
	ctx := context.Background()
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	local := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { remote.Close(); local.Close() })
	flaky := &storetest.Flaky{Next: remote}
	const remember = 4
	f, err := failover.New(flaky, local, failover.Options{
		Remember: remember,
		Breaker:  failover.BreakerOptions{Clock: clk.Now},
	})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.FixedWindow(1, time.Hour)
	out := make([]sluice.Status, 1)
	const keys = 64
	for i := range keys {
		c := []sluice.Check{{Key: fmt.Sprint("k", i), Limit: lim, Cost: 1}}
		if err := f.Apply(ctx, c, out); err != nil || !out[0].Allowed {
			t.Fatalf("key %d on the primary: %+v, %v", i, out[0], err)
		}
	}
	flaky.Fail(storetest.ErrRedisDown)
	started := 0 // keys the fallback started from the primary's last word (0 left)
	for i := range keys {
		c := []sluice.Check{{Key: fmt.Sprint("k", i), Limit: lim, Cost: 1}}
		if err := f.Apply(ctx, c, out); err != nil {
			t.Fatal(err)
		}
		if !out[0].Allowed {
			started++
		}
	}
	if started == 0 || started > remember {
		t.Errorf("%d keys started from the primary's last word, want 1 to %d (Remember)", started, remember)
	}
}
