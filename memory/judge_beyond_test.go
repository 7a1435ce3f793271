package memory

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Once the store keeps maxExtraJudges parameter sets beyond each limit's
// first, all limits together, a limit's second set is one it does not
// keep, as its 65th is: its refused client is not freed by a flood of new
// keys either.
func TestASetBeyondTheGlobalBoundNeverFreesItsRefusedClient(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // stands still
	s := New(WithMaxKeys(16), WithShards(1), WithSweepInterval(0), WithClock(func() time.Time { return at }))
	defer s.Close()
	out := make([]sluice.Status, 1)
	ask := func(key string, l sluice.Limit, cost int64) bool {
		t.Helper()
		if err := s.Apply(context.Background(), []sluice.Check{{Key: key, Limit: l, Cost: cost}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0].Allowed
	}
	ask("customer", sluice.FixedWindow(1000, time.Minute).Named("per-minute"), 1)
	s.limits.extra.Store(maxExtraJudges) // every other limit's sets used it up
	victim := sluice.FixedWindow(10, time.Minute).Named("per-minute")
	if !ask("victim", victim, 10) || ask("victim", victim, 1) {
		t.Fatalf("the victim was not admitted 10 of 10, then refused: %+v", out[0])
	}
	if n := len(s.limits.find(&victim).list()); n != 1 {
		t.Fatalf("the store keeps %d sets of per-minute, want 1", n)
	}
	flood := sluice.FixedWindow(5, time.Hour).Named("login")
	for i := range 100 {
		ask("flood-"+strconv.Itoa(i), flood, 1)
		if ask("victim", victim, 1) {
			t.Fatalf("the victim, refused at 10 of 10, was admitted after %d new keys; %+v", i+1, s.Stats())
		}
	}
}
