package redis

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// settleTimeout bounds each call of the settle tests: the script runs
// before the fault must fit in it, the fault outlasts it.
const settleTimeout = 2 * time.Second

// slowAfter returns a test clock on base whose reads after the nth wait
// past settleTimeout: the script runs that read it fail, those before
// answer.
func slowAfter(base *conformance.Clock, n int64) func() time.Time {
	var reads atomic.Int64
	return func() time.Time {
		if reads.Add(1) > n {
			time.Sleep(settleTimeout + 200*time.Millisecond)
		}
		return base.Now()
	}
}

// A later slot refuses and the refund of the earlier slot's reservation
// fails: the call is still refused, not an error (which on_store_error
// allow would turn into an admission), and the reservation left in place
// is counted.
func TestCrossSlotRefusalStandsWhenItsRefundFails(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	subj := subjectsBySlot(2, "unrefunded-")
	low, high := subj[0], subj[1]
	limit := sluice.FixedWindow(1, 400*24*time.Hour).Named("fw")
	base := conformance.NewClock(conformance.DefaultStart)
	bg := context.Background()
	plain := New(client, WithTimeForTesting(base.Now), WithTimeout(testTimeout))
	out := make([]sluice.Status, 2)
	if err := plain.Apply(bg, []sluice.Check{{Key: high, Limit: limit, Cost: 1}}, out[:1]); err != nil || !out[0].Allowed {
		t.Fatalf("first call: %+v, %v", out[0], err)
	}

	// Reads 1 and 2 are the slots' reserve runs; the third, the refund's,
	// outlasts the store's timeout.
	store := New(client, WithTimeForTesting(slowAfter(base, 2)), WithTimeout(settleTimeout))
	checks := []sluice.Check{{Key: low, Limit: limit, Cost: 1}, {Key: high, Limit: limit, Cost: 1}}
	if err := store.Apply(bg, checks, out); err != nil {
		t.Fatalf("Apply: %v; want the later slot's refusal, which Redis decided", err)
	}
	if out[1].Allowed {
		t.Errorf("statuses %+v: want the later slot refused", out)
	}
	if n := store.Unrefunded(); n != 1 {
		t.Errorf("Unrefunded() = %d, want the one reservation left in place", n)
	}
}

// The first slot refuses and the later slots cannot be read: the call is
// still refused, and the checks no slot could decide report no refusal of
// their own.
func TestCrossSlotRefusalStandsWhenADryRunFails(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	subj := subjectsBySlot(3, "unread-")
	limit := sluice.FixedWindow(1, 400*24*time.Hour).Named("fw")
	base := conformance.NewClock(conformance.DefaultStart)
	bg := context.Background()
	plain := New(client, WithTimeForTesting(base.Now), WithTimeout(testTimeout))
	out := make([]sluice.Status, 3)
	if err := plain.Apply(bg, []sluice.Check{{Key: subj[0], Limit: limit, Cost: 1}}, out[:1]); err != nil || !out[0].Allowed {
		t.Fatalf("first call: %+v, %v", out[0], err)
	}

	// Read 1 is the first slot's reserve run, which refuses; the dry runs
	// of the other two outlast the store's timeout.
	store := New(client, WithTimeForTesting(slowAfter(base, 1)), WithTimeout(settleTimeout))
	checks := []sluice.Check{{Key: subj[0], Limit: limit, Cost: 1}, {Key: subj[1], Limit: limit, Cost: 1}, {Key: subj[2], Limit: limit, Cost: 1}}
	for i := range out {
		out[i] = sluice.Status{RetryAfter: time.Hour} // what a reused slice may hold
	}
	if err := store.Apply(bg, checks, out); err != nil {
		t.Fatalf("Apply: %v; want the first slot's refusal, which Redis decided", err)
	}
	if out[0].Allowed {
		t.Errorf("statuses %+v: want the first slot refused", out)
	}
	for i := 1; i < 3; i++ {
		if st := out[i]; !st.Allowed || st.RetryAfter != 0 || st.Remaining != 0 {
			t.Errorf("status %d %+v: want a check no slot decided reported as not refusing, nothing known remaining", i, st)
		}
	}
}

// Through Open's store under OnStoreError allow, a refused call whose
// refund fails is refused all the same, and the reservation left in
// place is counted.
func TestOpenStoreKeepsACrossSlotRefusalUnderAllow(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t)
	client := cl.Client(t)
	subj := subjectsBySlot(2, "allowed-")
	low, high := subj[0], subj[1]
	limit := sluice.FixedWindow(1, 400*24*time.Hour).Named("fw")
	base := conformance.NewClock(conformance.DefaultStart)
	bg := context.Background()
	plain := New(client, WithTimeForTesting(base.Now), WithTimeout(testTimeout))
	out := make([]sluice.Status, 2)
	if err := plain.Apply(bg, []sluice.Check{{Key: high, Limit: limit, Cost: 1}}, out[:1]); err != nil || !out[0].Allowed {
		t.Fatalf("first call: %+v, %v", out[0], err)
	}
	g, err := Open(bg, Options{Mode: ModeCluster, Addrs: cl.Addrs(), Timeout: settleTimeout, OnStoreError: failover.Allow},
		WithTimeForTesting(slowAfter(base, 2)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	checks := []sluice.Check{{Key: low, Limit: limit, Cost: 1}, {Key: high, Limit: limit, Cost: 1}}
	var d sluice.Decision
	if err := sluice.NewLimiter(g).Allow(bg, checks, &d); err != nil {
		t.Fatal(err)
	}
	if d.Allowed {
		t.Errorf("decision %+v: a call Redis refused was admitted", d)
	}
	if n := g.Unrefunded(); n != 1 {
		t.Errorf("Unrefunded() = %d, want 1", n)
	}
}
