package failover_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
)

// failingPrimary is a primary store that cannot be reached.
type failingPrimary struct{}

func (failingPrimary) Apply(context.Context, []sluice.Check, []sluice.Status) error {
	return sluice.ErrStoreUnavailable
}

// FellBack tells a caller that a decision it got may be the OnError
// rule's — under Local, a refusal included, whose statuses carry no mark
// — and is false while the primary decides; a node that did not fall back
// (Options.Node) is not blamed for another's.
func TestFellBackTellsADecisionOfTheOnErrorRule(t *testing.T) {
	ctx := context.Background()
	local := memory.New(memory.WithSweepInterval(0))
	defer local.Close()
	primary := memory.New(memory.WithSweepInterval(0))
	defer primary.Close()
	limit := sluice.FixedWindow(1, time.Hour)
	up, err := failover.New(primary, local, failover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	down, err := failover.New(failingPrimary{}, local, failover.Options{
		Node: func(c *sluice.Check) string { return c.Key[:1] }})
	if err != nil {
		t.Fatal(err)
	}
	checks := []sluice.Check{{Key: "a1", Limit: limit, Cost: 1}}
	other := []sluice.Check{{Key: "b1", Limit: limit, Cost: 1}}
	out := make([]sluice.Status, 1)
	if err := up.Apply(ctx, checks, out); err != nil {
		t.Fatal(err)
	}
	if up.FellBack(checks, time.Hour) || up.FellBack(nil, time.Hour) {
		t.Error("FellBack after the primary decided, want false")
	}
	if down.FellBack(checks, time.Hour) {
		t.Error("FellBack before any call, want false")
	}
	for range 2 { // admitted, then refused by the local state
		if err := down.Apply(ctx, checks, out); err != nil {
			t.Fatal(err)
		}
		if !down.FellBack(checks, time.Second) || !down.FellBack(nil, time.Second) {
			t.Errorf("FellBack after a call decided locally (allowed %v), want true", out[0].Allowed)
		}
	}
	if down.FellBack(other, time.Hour) {
		t.Error("FellBack for the checks of a node no call fell back on, want false")
	}
	time.Sleep(2 * time.Millisecond)
	if down.FellBack(checks, time.Millisecond) {
		t.Error("FellBack within 1ms, 2ms after the last fallback, want false")
	}
	var zero failover.Store
	if zero.FellBack(checks, time.Hour) {
		t.Error("the zero Store FellBack, want false")
	}
}
