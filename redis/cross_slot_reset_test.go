package redis

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// TestACrossSlotRefundAfterAResetLeavesTheFreshStateAlone: a call spanning
// Cluster slots reserves in its first slot; a later slot refuses and the
// reservation is refunded (refund.lua). The contract: a refund leaves alone
// a state that never counted the reservation — one reset (Store.Reset) at
// or after it, or created after it (the state that counted it evicted or
// deleted) — as Store.Refund and lease.lua do (see the package
// documentation, Keys). Taking the reservation's units out of the fresh
// count would let the key admit them again beyond its limit: 6 admitted
// into the fresh state of a limit of 10 leave room for 4, not 8.
func TestACrossSlotRefundAfterAResetLeavesTheFreshStateAlone(t *testing.T) {
	client := redistest.Cluster(t).Client(t)
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(10, time.Minute).Named("fw"),
		sluice.SlidingCounter(10, time.Minute).Named("sc"),
		sluice.GCRA(10, time.Minute).WithBurst(10).Named("gcra"), // a bucket: the fresh state lacks its tag of pending reservations too
	} {
		for _, how := range []string{"reset", "evicted"} {
			t.Run(l.Name()+"-"+how, func(t *testing.T) {
				clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
				store := New(client, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
				ctx := context.Background()
				subject := "refund-reset-" + l.Name() + "-" + how
				checks := []sluice.Check{{Key: subject, Limit: l, Cost: 4}}
				keys := []string{Key(subject, l.ID())}
				out := make([]sluice.Status, 1)

				// The call's first slot reserves 4 units.
				r, err := store.run(ctx, modeReserve, "tok", checks, keys, []int{0}, out)
				if err != nil || r.refused {
					t.Fatalf("reserve: %+v, %v", r, err)
				}
				// Meanwhile the key's state is forgotten …
				clock.Advance(time.Millisecond)
				switch how {
				case "reset":
					if _, err := store.Reset(ctx, subject, []sluice.Limit{l}); err != nil {
						t.Fatal(err)
					}
				default:
					if err := client.Do(ctx, client.B().Del().Key(keys[0]).Build()).Error(); err != nil {
						t.Fatal(err)
					}
				}
				// … and the fresh state admits 6.
				clock.Advance(time.Millisecond)
				if err := store.Apply(ctx, []sluice.Check{{Key: subject, Limit: l, Cost: 6}}, out); err != nil || !out[0].Allowed {
					t.Fatalf("fresh call: %+v, %v", out, err)
				}
				// A later slot refused: the reservation is refunded.
				clock.Advance(time.Millisecond)
				if err := store.refund(ctx, "tok", checks, keys, reservation{idx: []int{0}, undo: r.undo}, out); err != nil {
					t.Fatal(err)
				}
				admitted := 0
				for range 10 {
					if err := store.Apply(ctx, []sluice.Check{{Key: subject, Limit: l, Cost: 1}}, out); err != nil {
						t.Fatal(err)
					}
					if out[0].Allowed {
						admitted++
					}
				}
				if admitted != 4 {
					t.Errorf("%s: the fresh state counted 6 of 10, then the refund of a reservation made before it was %s: "+
						"%d more admitted, want 4 (in all %d in the window of a limit of 10)", l, how, admitted, 6+admitted)
				}
			})
		}
	}
}

// TestALeasedCrossSlotTakeRefundedAfterAResetLeavesTheFreshStateAlone: the
// same through a Leased. A call whose checks span slots takes its leases
// in one reservation per slot (cost + lease); when a later slot refuses,
// the first slot's reservation — the call's cost and its whole lease — is
// refunded. The contract: if the key was reset between the two (by an
// operator, through another instance) and its fresh state admitted 50 of
// 100 meanwhile, the refund leaves that state alone: 50 more fit, not 50
// plus the reservation.
func TestALeasedCrossSlotTakeRefundedAfterAResetLeavesTheFreshStateAlone(t *testing.T) {
	client := redistest.Cluster(t).Client(t)
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
	other := New(client, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
	subj := subjectsBySlot(2, "refund-reset-lease-")
	a := sluice.FixedWindow(100, time.Hour).Named("fw-a")
	b := sluice.FixedWindow(100, time.Hour).Named("fw-b")
	ctx := context.Background()

	var runs atomic.Int64
	var armed atomic.Bool
	var hookErr error
	storeNow := func() time.Time {
		if armed.Load() && runs.Add(1) == 2 {
			// The first slot has reserved; before the second slot runs, the
			// first slot's key is reset and its fresh state admits 50.
			armed.Store(false)
			if _, err := other.Reset(ctx, subj[0], []sluice.Limit{a}); err != nil {
				hookErr = err
			}
			out := make([]sluice.Status, 1)
			if err := other.Apply(ctx, []sluice.Check{{Key: subj[0], Limit: a, Cost: 50}}, out); err != nil || !out[0].Allowed {
				hookErr = fmt.Errorf("fresh call: %+v, %v", out, err)
			}
		}
		return clock.Now()
	}
	store := New(client, WithTimeForTesting(storeNow), WithTimeout(testTimeout))
	leased := newLeased(store, store, clock.Now, 1, LeaseOptions{Mode: LeaseAuto, Idle: time.Hour, MaxAge: time.Hour})
	t.Cleanup(func() { leased.Close() })

	// b is spent: the call's second slot refuses.
	out := make([]sluice.Status, 2)
	if err := other.Apply(ctx, []sluice.Check{{Key: subj[1], Limit: b, Cost: 100}}, out[:1]); err != nil || !out[0].Allowed {
		t.Fatalf("spending b: %+v, %v", out[:1], err)
	}
	armed.Store(true)
	checks := []sluice.Check{{Key: subj[0], Limit: a, Cost: 1}, {Key: subj[1], Limit: b, Cost: 1}}
	if err := leased.Apply(ctx, checks, out); err != nil {
		t.Fatal(err)
	}
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	if armed.Load() {
		t.Fatal("the hook did not run between the two slots")
	}
	if out[1].Allowed {
		t.Fatalf("the call was admitted: %+v", out)
	}
	// The fresh state counted 50 of 100: 50 more fit, no more.
	admitted := int64(0)
	one := make([]sluice.Status, 1)
	for range 200 {
		if err := other.Apply(ctx, []sluice.Check{{Key: subj[0], Limit: a, Cost: 1}}, one); err != nil {
			t.Fatal(err)
		}
		if one[0].Allowed {
			admitted++
		}
	}
	if admitted != 50 {
		t.Errorf("after the fresh state admitted 50 of 100, %d more were admitted, want 50: the refund of the call's "+
			"reservation (cost and lease) made before the reset was taken out of the fresh count (%d in all in the window)",
			admitted, 50+admitted)
	}
}
