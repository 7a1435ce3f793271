package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// sidesFailing is a primary whose Refund and Release fail with err when it
// is set, as a Redis store's do when Redis cannot be reached.
type sidesFailing struct {
	*memory.Store
	err error
}

func (s *sidesFailing) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	if s.err != nil {
		return s.err
	}
	return s.Store.Refund(ctx, checks, charged)
}

func (s *sidesFailing) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	if s.err != nil {
		return s.err
	}
	return s.Store.Release(ctx, checks, leases)
}

// A refund or a release the primary was asked and failed is a store error,
// counted in Stats.StoreErrors (the store's and its node's) as a decision's
// is; one the caller gave up is not.
func TestFailedRefundsAndReleasesAreStoreErrors(t *testing.T) {
	remote, local := memory.New(), memory.New()
	t.Cleanup(func() { remote.Close(); local.Close() })
	primary := &sidesFailing{Store: remote}
	f, err := failover.New(primary, local, failover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := []sluice.Check{
		{Key: "k", Limit: sluice.FixedWindow(10, time.Minute), Cost: 1},
		{Key: "k", Limit: sluice.Concurrency(2, time.Minute), Cost: 1},
	}
	out := make([]sluice.Status, 2)
	if err := f.Apply(ctx, checks, out); err != nil || !out[0].Allowed || out[0].Charged == 0 || out[1].Lease == 0 {
		t.Fatalf("Apply: %+v, %v", out, err)
	}
	primary.err = storetest.ErrRedisDown
	if err := f.Refund(ctx, checks, []int64{out[0].Charged, 0}); err == nil {
		t.Fatal("Refund with the primary down: no error")
	}
	if err := f.Release(ctx, checks, []int64{0, out[1].Lease}); err == nil {
		t.Fatal("Release with the primary down: no error")
	}
	st := f.Stats()
	if st.StoreErrors != 2 || st.Nodes[""].StoreErrors != 2 {
		t.Errorf("StoreErrors %d (node %d), want 2: a failed refund and a failed release", st.StoreErrors, st.Nodes[""].StoreErrors)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	primary.err = gone.Err()
	if err := f.Refund(gone, checks, []int64{out[0].Charged, 0}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Refund of a caller that gave up: %v", err)
	}
	if n := f.Stats().StoreErrors; n != 2 {
		t.Errorf("StoreErrors %d after a refund the caller gave up, want still 2", n)
	}
}
