package failover_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
)

// nodeStore is a primary of two nodes, named after the first letter of a
// key, one of which can be made to fail.
type nodeStore struct {
	next sluice.Store
	down atomic.Value // string: the failing node, or ""
}

func nodeOf(c *sluice.Check) string { return c.Key[:1] }

func (s *nodeStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if down, _ := s.down.Load().(string); down != "" {
		for i := range checks {
			if nodeOf(&checks[i]) == down {
				return errors.New("node " + down + " is down")
			}
		}
	}
	return s.next.Apply(ctx, checks, out)
}

func TestAFailingNodeKeepsOnlyItsOwnKeysFromThePrimary(t *testing.T) {
	remote, local := memory.New(), memory.New()
	defer remote.Close()
	defer local.Close()
	primary := &nodeStore{next: remote}
	primary.down.Store("b")
	f := mustFailover(primary, local, failover.Options{Node: nodeOf, Instances: 2})
	lim := sluice.NewLimiter(f)
	l := sluice.FixedWindow(1000, time.Hour)
	for range 20 {
		for _, key := range []string{"a1", "b1"} {
			if _, err := allow(lim, context.Background(), sluice.Check{Key: key, Limit: l, Cost: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := f.Stats()
	if a := st.Nodes["a"]; a != (failover.NodeStats{}) {
		t.Errorf("node a: %+v, want untouched: its keys must stay on the primary", a)
	}
	if b := st.Nodes["b"]; b.Breaker != failover.BreakerOpen || b.FallbackDecisions != 20 || b.StoreErrors != failover.DefaultBreakerFailures {
		t.Errorf("node b: %+v, want open after %d failures and 20 fallbacks", b, failover.DefaultBreakerFailures)
	}
	if st.Breaker != failover.BreakerOpen {
		t.Errorf("Stats.Breaker %v, want open (one node is)", st.Breaker)
	}
	d, err := allow(sluice.NewLimiter(remote), context.Background(), sluice.Check{Key: "a1", Limit: l})
	if err != nil || d.Remaining != 1000-20 {
		t.Errorf("the primary holds %d of a1's 1000 (%v), want 980: every a call was its own", d.Remaining, err)
	}
}

// A primary that answered last that 4 of 10 remain starts an instance of
// two on 2 of its share of 5, not on 5.
func TestTheFallbackStartsFromItsShareOfThePrimarysLastWord(t *testing.T) {
	r := newFailoverRig(t, failover.Options{Instances: 2})
	l := sluice.FixedWindow(10, time.Minute)
	check := sluice.Check{Key: "k", Limit: l, Cost: 1}
	for range 6 {
		r.allow(t, check)
	}
	r.primary.fail(errors.New("down"))
	admitted := 0
	for range 10 {
		if r.allow(t, check).Allowed {
			admitted++
		}
	}
	if admitted != 2 {
		t.Errorf("the fallback admitted %d, want 2: half of the 4 the primary said were left", admitted)
	}
}

// What the fallback admitted is charged to the primary before the primary
// decides the key again; calls of the return period are decided locally
// and charged at once; afterwards the primary admits only what is left.
func TestWhatTheFallbackAdmittedIsChargedBeforeThePrimaryDecides(t *testing.T) {
	var charged atomic.Int64
	var r *failoverRig
	charge := func(ctx context.Context, checks []sluice.Check) error {
		if err := r.primary.errNow(); err != nil {
			return err
		}
		for _, c := range checks {
			out := make([]sluice.Status, 1)
			peek := []sluice.Check{{Key: c.Key, Limit: c.Limit}}
			if err := r.remote.Apply(ctx, peek, out); err != nil {
				return err
			}
			if take := min(c.Cost, out[0].Remaining); take > 0 {
				peek[0].Cost = take
				if err := r.remote.Apply(ctx, peek, out); err != nil {
					return err
				}
				charged.Add(take)
			}
		}
		return nil
	}
	r = newFailoverRig(t, failover.Options{Instances: 2, Charge: charge})
	l := sluice.FixedWindow(10, time.Hour)
	check := sluice.Check{Key: "k", Limit: l, Cost: 1}
	r.primary.fail(errors.New("down"))
	admitted := 0
	for range 8 { // the breaker opens after 5; the share is 5
		if r.allow(t, check).Allowed {
			admitted++
		}
	}
	if admitted != 5 || charged.Load() != 0 {
		t.Fatalf("during the outage: %d admitted, %d charged; want 5, 0", admitted, charged.Load())
	}
	r.primary.fail(nil)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	if d := r.allow(t, check); d.Allowed || charged.Load() != 5 {
		t.Fatalf("the probe: allowed %v (its share is spent), %d charged (want 5)", d.Allowed, charged.Load())
	}
	if st := r.failover.Stats(); st.Breaker != failover.BreakerClosed || st.Returning != 1 {
		t.Errorf("after the probe: %+v, want closed and returning", st)
	}
	r.clk.Advance(10 * time.Second) // past the return period, within the window
	for range 10 {
		if r.allow(t, check).Allowed {
			admitted++
		}
	}
	if admitted != 10 {
		t.Errorf("%d admitted in the window in all, want the limit's 10", admitted)
	}
	if st := r.failover.Stats(); st.Breaker != failover.BreakerClosed || st.Returning != 0 || st.Uncharged != 0 {
		t.Errorf("stats %+v", st)
	}
}
