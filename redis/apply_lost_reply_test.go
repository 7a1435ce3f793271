package redis

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
)

// switched is a sluice.Store that sends each call to the store it holds
// now.
type switched struct{ to atomic.Pointer[Store] }

func (s *switched) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	return s.to.Load().Apply(ctx, checks, out)
}

// A decision whose reply is lost — Redis ran the call and counted its
// units, its caller timed out — is decided again by the failover, and the
// units it admits then are charged to Redis on top: the lost call's cost
// is counted twice, once. This is the bound the package documentation
// states (Failover): it errs on the side of refusing, by at most the cost
// of each call whose reply is lost, and never admits more than the limit.
func TestADecisionWhoseReplyIsLostIsCountedTwiceAtMostOnce(t *testing.T) {
	srv := redistest.Standalone(t)
	thief := newReplyThief(t, srv.Addr)
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
	direct := New(srv.Client(t), WithTimeout(testTimeout), WithTimeForTesting(clock.Now))
	thiefClient, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{thief.Addr()},
		DisableCache: true, ForceSingleClient: true, PipelineMultiplex: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(thiefClient.Close)
	robbed := New(thiefClient, WithTimeout(500*time.Millisecond), WithTimeForTesting(clock.Now), WithBatching(0))

	l := sluice.FixedWindow(10, time.Hour)
	ctx := context.Background()
	c := sluice.Check{Key: "lost-decision", Limit: l}
	// A peek loads the script, so that the robbed run is the call itself.
	if err := robbed.Apply(ctx, []sluice.Check{c}, make([]sluice.Status, 1)); err != nil {
		t.Fatal(err)
	}
	primary := &switched{}
	primary.to.Store(robbed)
	local := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	f, err := failover.New(primary, local, failover.Options{
		Timeout: 2 * time.Second, Breaker: failover.BreakerOptions{Failures: 100},
		ChargeOnce: direct.ChargeOnce})
	if err != nil {
		t.Fatal(err)
	}
	admitted := int64(0)
	spend := func(cost int64) {
		t.Helper()
		out := make([]sluice.Status, 1)
		c.Cost = cost
		if err := f.Apply(ctx, []sluice.Check{c}, out); err != nil || !out[0].Allowed {
			t.Fatalf("a check of %d: %+v, %v; want admitted", cost, out[0], err)
		}
		admitted += cost
	}
	left := func() int64 {
		t.Helper()
		out := make([]sluice.Status, 1)
		c.Cost = 0
		if err := direct.Apply(ctx, []sluice.Check{c}, out); err != nil {
			t.Fatal(err)
		}
		return out[0].Remaining
	}

	spend(1)
	thief.steal(true)
	spend(2) // Redis runs it, the reply is lost: the fallback decides it
	deadline := time.Now().Add(testTimeout)
	for left() != 7 {
		if time.Now().After(deadline) {
			t.Fatalf("Redis has %d left, want 7: the robbed call never ran", left())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := f.Stats(); st.StoreErrors != 1 {
		t.Fatalf("store errors %d, want 1 (the robbed call)", st.StoreErrors)
	}

	primary.to.Store(direct)
	spend(1) // charges the fallback's 2, then Redis decides
	if got, want := left(), 10-admitted-2; got != want {
		t.Errorf("Redis has %d of 10 left after %d admitted, want %d: the lost call's 2 counted twice, no more", got, admitted, want)
	}
	for range 10 {
		out := make([]sluice.Status, 1)
		c.Cost = 1
		if err := f.Apply(ctx, []sluice.Check{c}, out); err != nil {
			t.Fatal(err)
		}
		if out[0].Allowed {
			admitted++
		}
	}
	if admitted != 10-2 {
		t.Errorf("%d admitted of a limit of 10, want 8: the limit less the lost call's cost", admitted)
	}
}
