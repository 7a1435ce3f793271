package failover

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A decision's account may be charged and closed by another call (as one
// of its extra keys) between the decision's open and its add: the units
// it admitted get an account of their own, not the uncharged count.
func TestLedgerKeepsUnitsWhoseAccountClosedMeanwhile(t *testing.T) {
	lg := newLedger(0)
	c := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Second), Cost: 1}
	if !lg.open(&c) {
		t.Fatal("open: no account started")
	}
	taken, err := lg.take(context.Background(), nil, func(*account) bool { return true })
	if err != nil || len(taken) != 1 {
		t.Fatalf("take: %d accounts, %v", len(taken), err)
	}
	lg.done(taken, true) // charged nothing: the account closes
	lg.add([]sluice.Check{c}, []sluice.Status{{Allowed: true}})
	if a := lg.m[stateKey{"k", c.Limit.ID()}]; a == nil || a.admitted != 1 || lg.uncharged.Load() != 0 {
		t.Errorf("account %+v, uncharged %d: want 1 unit owed, none uncharged", a, lg.uncharged.Load())
	}
	if lg.size.Load() != 1 {
		t.Errorf("size %d, want 1", lg.size.Load())
	}
}
