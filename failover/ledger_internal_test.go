package failover

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// An account charged and closed by another call (as one of its extra keys)
// before a decision's add: the units that decision admitted get an account
// of their own, not the uncharged count.
func TestLedgerKeepsUnitsWhoseAccountClosedMeanwhile(t *testing.T) {
	lg := newLedger(0)
	c := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Second), Cost: 1}
	lg.add([]sluice.Check{c}, []sluice.Status{{Allowed: true}}) // opens the account
	taken, err := lg.take(context.Background(), nil, func(*account) bool { return true })
	if err != nil || len(taken) != 1 {
		t.Fatalf("take: %d accounts, %v", len(taken), err)
	}
	lg.done(taken, true) // charged: the account closes
	lg.add([]sluice.Check{c}, []sluice.Status{{Allowed: true}})
	if a := lg.m[stateKey{"k", c.Limit.ID()}]; a == nil || a.admitted != 1 || lg.uncharged.Load() != 0 {
		t.Errorf("account %+v, uncharged %d: want 1 unit owed, none uncharged", a, lg.uncharged.Load())
	}
	if lg.size.Load() != 1 {
		t.Errorf("size %d, want 1", lg.size.Load())
	}
}
