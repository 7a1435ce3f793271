package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A lease taken before a Reset is not given back out of the lease book
// the key builds since: the book never held it, and the request it belongs
// to no longer counts. With the default clock a concurrency limit is
// decided at the ticker's time, which stands still between two ticks, so
// a lease taken before the reset and the first taken after it in one tick
// would have the same stamp were the fresh book to stamp from the tick's
// time: the old request's Release would end a new request's lease while it
// is in flight, and a limit of 2 would hold 3. (A resolution of an hour
// makes the tick that has not come yet deterministic; at the default
// millisecond it takes a reset and new requests within one tick.) A lease
// taken since the reset is given back as usual.
func TestAReleaseFromBeforeAResetFreesNoNewLease(t *testing.T) {
	ctx := context.Background()
	s := memory.New(memory.WithSweepInterval(0), memory.WithClockResolution(time.Hour))
	defer s.Close()
	limit := sluice.Concurrency(2, 10*time.Hour).Named("conn")
	checks := []sluice.Check{{Key: "client", Limit: limit, Cost: 1}}
	take := func() (int64, bool) {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := s.Apply(ctx, checks, out); err != nil {
			t.Fatal(err)
		}
		return out[0].Lease, out[0].Allowed
	}
	old, ok := take()
	if !ok {
		t.Fatal("first lease refused")
	}
	s.Reset("client", []sluice.Limit{limit})
	inFlight := 0
	var since int64
	for range 2 {
		if lease, ok := take(); ok {
			inFlight++
			since = lease
		}
	}
	// The request of the lease from before the reset ends.
	if err := s.Release(ctx, checks, []int64{old}); err != nil {
		t.Fatal(err)
	}
	if _, ok := take(); ok {
		inFlight++
	}
	if inFlight > 2 {
		t.Fatalf("%d requests in flight after the reset under a concurrency limit of 2: the release of the lease from before the reset (stamp %d) freed a lease taken since", inFlight, old)
	}
	// A request admitted since the reset ends: its slot is free again.
	if err := s.Release(ctx, checks, []int64{since}); err != nil {
		t.Fatal(err)
	}
	if _, ok := take(); !ok {
		t.Error("a lease taken after the reset was not given back")
	}
}
