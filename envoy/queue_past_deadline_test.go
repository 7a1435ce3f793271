package envoy_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// A request whose deadline has passed before the service decides it (a
// loaded machine, Envoy's 20ms timeout) refuses only its queue's late
// turn: a fixed window beside it, which does not wait, is not late. The
// window is answered as decided, its charge given back with the refused
// request's, and is not marked over: the client's next request is OK with
// all that the window held before.
func TestAPastDeadlineRefusesOnlyTheLateQueueTurn(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(queueRules))
	if err != nil {
		t.Fatal(err)
	}
	// The clock stands still: the queue's next turn stays 100ms away.
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(start))
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	svc, err := envoy.NewService(sluice.NewLimiter(mem), rules, envoy.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	u, c := desc("upload", "x"), desc("client", "c1")
	if _, err := svc.ShouldRateLimit(context.Background(), request("api", 0, u, c)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	<-ctx.Done()
	resp, err := svc.ShouldRateLimit(ctx, request("api", 0, u, c))
	if err != nil {
		t.Fatalf("the late request: %v, want an answer", err)
	}
	if got := statusOf(resp.Statuses[1]); resp.GetOverallCode() != over ||
		statusOf(resp.Statuses[0]).code != over || got.code != ok || got.remaining != 4 {
		t.Errorf("the late request: %v, %+v, %+v; want OVER_LIMIT, the queue over, per-client OK with 4 left (given back)",
			resp.GetOverallCode(), statusOf(resp.Statuses[0]), got)
	}
	resp, err = svc.ShouldRateLimit(context.Background(), request("api", 0, c))
	if err != nil {
		t.Fatal(err)
	}
	if got := statusOf(resp.Statuses[0]); resp.GetOverallCode() != ok || got.remaining != 3 {
		t.Errorf("the client alone: %v, %+v; want OK with 3 left (one request counted)", resp.GetOverallCode(), got)
	}
}
