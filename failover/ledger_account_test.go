package failover

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A call that charges an account reads its limit without the ledger's
// lock, so a decision under a changed limit (same ID) added meanwhile
// leaves the limit to that call and the account takes it when the call is
// done: its units, added all the same, are charged under the limit in
// force by the next call.
func TestAnAccountBeingChargedTakesAChangedLimitWhenDone(t *testing.T) {
	lg := newLedger(0)
	before := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 2}
	after := sluice.Check{Key: "k", Limit: sluice.FixedWindow(20, time.Hour), Cost: 3}
	lg.add([]sluice.Check{before}, []sluice.Status{{Allowed: true}})
	taken, err := lg.take(context.Background(), []sluice.Check{before}, func(*account) bool { return false })
	if err != nil || len(taken) != 1 {
		t.Fatalf("take: %d accounts, %v", len(taken), err)
	}
	a := taken[0]
	lg.add([]sluice.Check{after}, []sluice.Status{{Allowed: true}})
	if a.check.Limit != before.Limit {
		t.Errorf("limit changed under the charging call: %v", a.check.Limit)
	}
	lg.done(taken, true) // settled: the 2 claimed are charged
	if got := lg.m[stateKey{"k", before.Limit.ID()}]; got != a || a.admitted != 3 || a.check.Limit != after.Limit {
		t.Errorf("account %+v after the charge; want the 3 units admitted under the new limit, under it", got)
	}
	if n := lg.uncharged.Load(); n != 0 {
		t.Errorf("%d units uncharged, want 0", n)
	}
}
