package failover_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// A return call the primary refuses consumes nothing (sluice.Store), of the
// local share either: the units the share took for its window checks are
// refunded. Else a client the primary's per-second limit refuses during the
// return period would spend its share of its per-hour limit on calls never
// admitted, and be refused by the share (ErrReturning) with the quota
// unused.
func TestARefusedReturnCallLeavesTheLocalShare(t *testing.T) {
	charged := new(atomic.Int64)
	r := newChargingRig(t, failover.Options{Breaker: failover.BreakerOptions{OpenFor: 10 * time.Second}}, charged)
	perSecond := sluice.FixedWindow(1, time.Second).Named("second")
	perHour := sluice.FixedWindow(5, time.Hour).Named("hour")
	call := []sluice.Check{{Key: "k", Limit: perSecond, Cost: 1}, {Key: "k", Limit: perHour, Cost: 1}}
	r.primary.Fail(errors.New("down"))
	if d := r.allow(t, call...); !d.Allowed { // one failure: decided locally, owed
		t.Fatalf("the fallback: %+v", d)
	}
	r.primary.Fail(nil)
	refused := 0
	for range 4 { // each second another instance takes the per-second unit first
		r.clk.Advance(time.Second)
		if err := r.remote.Apply(context.Background(), call[:1], make([]sluice.Status, 1)); err != nil {
			t.Fatal(err)
		}
		if d := r.allow(t, call...); !d.Allowed {
			refused++
		}
	}
	if refused != 4 {
		t.Fatalf("%d of 4 calls refused, want 4 (the primary's per-second limit was taken)", refused)
	}
	r.clk.Advance(time.Second)
	// Admitted so far: 1 unit of the per-hour limit of 5. The primary has
	// room for both checks, and so would the share had the refused calls
	// consumed nothing.
	out := make([]sluice.Status, 2)
	if err := r.remote.Apply(context.Background(), []sluice.Check{{Key: "k", Limit: perSecond}, {Key: "k", Limit: perHour}}, out); err != nil {
		t.Fatal(err)
	}
	t.Logf("the primary holds %d of the per-second, %d of the per-hour limit", out[0].Remaining, out[1].Remaining)
	if d := r.allow(t, call...); !d.Allowed {
		t.Errorf("refused (%+v) with 1 of 5 per-hour units admitted and the per-second window free: the 4 refused calls consumed the local share", d.Statuses)
	}
}
