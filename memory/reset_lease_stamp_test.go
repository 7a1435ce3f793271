package memory

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
)

// Leases taken at one instant are stamped a µs apart, ahead of the clock:
// three taken while the time stands still at t are stamped t, t+1 and t+2.
// A Reset read at t is noted at the newest stamp it forgot, not at t, and
// a second reset of the emptied key keeps that time, so the leases taken
// since are stamped after every lease from before them, and giving those
// back frees none of the new ones: a limit of 3 holds at most 3 requests.
func TestAResetIsNotedAfterTheNewestLeaseItForgets(t *testing.T) {
	for _, resets := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d resets", resets), func(t *testing.T) { resetAfterLeasesAtOneInstant(t, resets) })
	}
}

func resetAfterLeasesAtOneInstant(t *testing.T, resets int) {
	s := New(WithSweepInterval(0))
	defer s.Close()
	var exact fakeTime
	start := sluice.MicrosSinceEpoch(conformance.DefaultStart)
	exact.us.Store(start)
	c := lagging(s, &exact)
	c.set(start)
	limit := sluice.Concurrency(3, 10*time.Hour).Named("conn")
	checks := []sluice.Check{{Key: "client", Limit: limit, Cost: 1}}
	take := func() (int64, bool) {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := s.Apply(context.Background(), checks, out); err != nil {
			t.Fatal(err)
		}
		return out[0].Lease, out[0].Allowed
	}
	var old []int64
	for range 3 {
		lease, ok := take()
		if !ok {
			t.Fatal("a lease before the reset refused")
		}
		old = append(old, lease)
	}
	if old[2] != start+2 {
		t.Fatalf("leases at one instant stamped %v, want %d, %d and %d", old, start, start+1, start+2)
	}
	for range resets {
		s.Reset("client", []sluice.Limit{limit})
	}
	inFlight := 0
	for range 3 {
		if lease, ok := take(); ok {
			inFlight++
			if lease <= old[2] {
				t.Errorf("a lease taken after the reset stamped %d, not after the newest from before it (%d)", lease, old[2])
			}
		}
	}
	for _, lease := range old {
		if err := s.Release(context.Background(), checks, []int64{lease}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := take(); ok {
		inFlight++
	}
	if inFlight > 3 {
		t.Errorf("%d requests in flight after the reset under a concurrency limit of 3: releases of leases from before it freed leases taken since", inFlight)
	}
}
