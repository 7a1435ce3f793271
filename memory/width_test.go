package memory

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// TestAPlanWithRulesOnOneKeyIsDecidedHoldingItsEntry: a plan of three
// limits with a sliding counter (four slots) and a rule keyed by the same
// client (a fifth) fit inline, so their call is decided holding only the
// key's entry, not under the shard's mutex.
func TestAPlanWithRulesOnOneKeyIsDecidedHoldingItsEntry(t *testing.T) {
	// A clock that stands still: the GCRA refills a unit a µs.
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := New(WithSweepInterval(0), WithClock(func() time.Time { return at }))
	defer s.Close()
	big := int64(1_000_000)
	checks := []sluice.Check{
		{Key: "client", Limit: sluice.GCRA(big, time.Second).Named("per-second"), Cost: 1},
		{Key: "client", Limit: sluice.SlidingCounter(big, time.Minute).Named("per-minute"), Cost: 1},
		{Key: "client", Limit: sluice.FixedWindow(big, 24*time.Hour).Named("per-day"), Cost: 1},
		{Key: "client", Limit: sluice.FixedWindow(big, time.Minute).Named("writes.per-minute"), Cost: 1},
		{Key: "tenant", Limit: sluice.FixedWindow(big, time.Minute).Named("tenants.per-minute"), Cost: 1},
	}
	out := make([]sluice.Status, len(checks))
	if _, err := s.apply(checks, out); err != nil { // the states are made under the mutex
		t.Fatal(err)
	}
	n := len(checks)
	sc := &scratch{make([]hash, n), make([]uint32, n), make([]heldCheck, n), make([]sluice.State, n), make([]int, 0, n)}
	for i := range checks {
		sc.hashes[i] = s.keyHash(checks[i].Key)
		sc.idx[i] = s.shardIndex(sc.hashes[i])
	}
	if _, ok := s.applyHeld(checks, out, sc); !ok {
		t.Fatal("the call went under the shard's mutex: a state of the client's five slots is beside the array")
	}
	for i, st := range out {
		if !st.Allowed || st.Remaining != big-2 {
			t.Errorf("check %d: %+v, want admitted with %d left", i, st, big-2)
		}
	}
}
