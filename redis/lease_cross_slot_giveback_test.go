package redis

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A call's leases on keys of several Cluster slots are each dated by the
// time of their own slot's master, whose state counted them: a key the take
// created on a later slot was born after the earliest slot's time, and a
// give-back dated by that time read as one from a state since replaced
// (lease.lua: taken < born), so its unspent units were counted Lost and
// stayed counted. After Return, each key holds exactly the one unit its
// call spent, and none is lost.
func TestACrossSlotTakeGivesBackEverySlotsLease(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	store := New(client, WithTimeout(testTimeout))
	leased := newLeased(store, store, nil, 1, LeaseOptions{Mode: LeaseAuto, Idle: time.Hour, MaxAge: time.Hour})
	t.Cleanup(func() { leased.Close() })

	subj := subjectsBySlot(2, "cross-giveback-")
	limit := sluice.FixedWindow(1000, 400*24*time.Hour).Named("fw")
	checks := []sluice.Check{{Key: subj[0], Limit: limit, Cost: 1}, {Key: subj[1], Limit: limit, Cost: 1}}
	out := make([]sluice.Status, 2)
	ctx := context.Background()
	if err := leased.Apply(ctx, checks, out); err != nil || !out[0].Allowed || !out[1].Allowed {
		t.Fatalf("call: %+v, %v; want both admitted", out, err)
	}
	if s := leased.Stats(); s.Leases != 2 || s.Held == 0 {
		t.Fatalf("the call took %d leases holding %d units, want 2 leases", s.Leases, s.Held)
	}
	if err := leased.Return(ctx); err != nil {
		t.Fatal(err)
	}
	st := leased.Stats()
	for i, subject := range subj {
		peek := []sluice.Check{{Key: subject, Limit: limit}}
		if err := store.Apply(ctx, peek, out[:1]); err != nil {
			t.Fatal(err)
		}
		if out[0].Remaining != 999 {
			t.Errorf("key %d (slot %d): %d left after Return, want 999 (1 spent): %d units of lease neither spent nor given back; stats %+v",
				i, slot(Key(subject, "fw")), out[0].Remaining, 999-out[0].Remaining, st)
		}
	}
	if st.Lost != 0 {
		t.Errorf("Return counted %d units Lost with no reset, eviction or loss of Redis's state", st.Lost)
	}
}
