package failover_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
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
	r.primary.Fail(errors.New("down"))
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

// newChargingRig is a failoverRig whose Charge takes from the remote
// store what it has left, as redis.Store.Charge does, counting the units
// taken in charged.
func newChargingRig(t *testing.T, opts failover.Options, charged *atomic.Int64) *failoverRig {
	var r *failoverRig
	opts.Charge = func(ctx context.Context, checks []sluice.Check) error { return chargeRemote(ctx, r, checks, charged) }
	r = newFailoverRig(t, opts)
	return r
}

// chargeRemote charges checks to r's remote store unless its primary
// fails: up to each check's Cost, what the remote store has left.
func chargeRemote(ctx context.Context, r *failoverRig, checks []sluice.Check, charged *atomic.Int64) error {
	if err := r.primary.Err(); err != nil {
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

// outage returns a charging rig of two instances, a check of 1 on a limit
// of 10 per hour, and the units charged, with the primary down.
func outage(t *testing.T) (r *failoverRig, check sluice.Check, charged *atomic.Int64) {
	charged = new(atomic.Int64)
	// Calls bounded by a minute: what fails is the test's choice (Fail,
	// Hang, a caller's cancel), not a loaded machine's delay past the
	// default 50 ms.
	r = newChargingRig(t, failover.Options{Instances: 2, Timeout: time.Minute}, charged)
	r.primary.Fail(errors.New("down"))
	return r, sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}, charged
}

// What the fallback admitted is charged to the primary before the primary
// decides the key again; calls of the return period are decided by the
// share and the primary together; afterwards the primary admits only what
// is left.
func TestWhatTheFallbackAdmittedIsChargedBeforeThePrimaryDecides(t *testing.T) {
	r, check, charged := outage(t)
	admitted := 0
	for range 8 { // the breaker opens after 5; the share is 5
		if r.allow(t, check).Allowed {
			admitted++
		}
	}
	if admitted != 5 || charged.Load() != 0 {
		t.Fatalf("during the outage: %d admitted, %d charged; want 5, 0", admitted, charged.Load())
	}
	r.primary.Fail(nil)
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

// While an instance returns, another may already decide on the primary
// alone: a return call is admitted only if the primary admits it too, so
// the two together never admit more than the limit. Here this instance's
// probe succeeds (its share of 5 has 3 left), then the other instance
// takes the 8 units the primary has left: this instance admits nothing
// more.
func TestAReturnCallIsAdmittedOnlyIfThePrimaryHasRoom(t *testing.T) {
	r, check, charged := outage(t)
	l := check.Limit
	admitted := 0
	if r.allow(t, check).Allowed {
		admitted++
	}
	for range failover.DefaultBreakerFailures - 1 { // peeks, until the breaker opens
		r.allow(t, sluice.Check{Key: "k", Limit: l})
	}
	r.primary.Fail(nil)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	if d := r.allow(t, check); !d.Allowed {
		t.Fatalf("the probe: %+v, want admitted (the share and the primary have room)", d)
	}
	admitted++
	other := sluice.NewLimiter(r.remote)
	if d, err := allow(other, context.Background(), sluice.Check{Key: "k", Limit: l, Cost: 8}); err != nil || !d.Allowed {
		t.Fatalf("the other instance: %+v, %v (the primary should have 8 left)", d, err)
	}
	for range 5 {
		if r.allow(t, check).Allowed {
			admitted++
		}
	}
	if admitted != 2 || charged.Load() != 1 {
		t.Errorf("this instance admitted %d (charged %d) beside the other's 8, want 2 (1): the limit is 10", admitted, charged.Load())
	}
	if st := r.failover.Stats(); st.Returning != 1 || st.Breaker != failover.BreakerClosed {
		t.Errorf("stats %+v, want closed and returning", st)
	}
}

// Two instances share a primary that fails for a moment: one (a) has one
// call fail, its breaker stays closed; the other (b) admits its share
// locally and its breaker opens. Had a's next calls been the primary's
// alone, they would have admitted 9 beside b's 5 not yet charged. A call
// that failed on its own starts a return period too: a admits its share.
func TestACallThatFailedOnItsOwnStartsAReturnPeriod(t *testing.T) {
	var charged atomic.Int64
	a := newChargingRig(t, failover.Options{Instances: 2}, &charged)
	bLocal := memory.New(memory.WithClock(a.clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { bLocal.Close() })
	b := sluice.NewLimiter(mustFailover(a.primary, bLocal, failover.Options{Instances: 2, Breaker: failover.BreakerOptions{Clock: a.clk.Now}}))
	l := sluice.FixedWindow(10, time.Hour)
	check := sluice.Check{Key: "k", Limit: l, Cost: 1}
	a.primary.Fail(errors.New("timeout"))
	admitted := 0
	if a.allow(t, check).Allowed {
		admitted++
	}
	for range 6 {
		d, err := allow(b, context.Background(), check)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		}
	}
	a.primary.Fail(nil)
	for range 10 {
		if a.allow(t, check).Allowed {
			admitted++
		}
	}
	if admitted != 10 {
		t.Errorf("a and b admitted %d, want the limit's 10", admitted)
	}
	if st := a.failover.Stats(); st.Returning != 1 || st.Breaker != failover.BreakerClosed {
		t.Errorf("a's stats %+v, want closed and returning", st)
	}
}

// A return call's units are counted by the primary: refunding them gives
// them back there.
func TestARefundOfAReturnCallGoesToThePrimary(t *testing.T) {
	var charged atomic.Int64
	r := newFailoverRig(t, failover.Options{})
	lim := sluice.NewLimiter(mustFailover(refundable{r.primary, r.remote}, r.local, failover.Options{Instances: 2,
		Breaker: failover.BreakerOptions{Clock: r.clk.Now},
		Charge:  func(ctx context.Context, checks []sluice.Check) error { return chargeRemote(ctx, r, checks, &charged) }}))
	l := sluice.FixedWindow(10, time.Hour)
	checks := []sluice.Check{{Key: "k", Limit: l, Cost: 1}}
	r.primary.Fail(errors.New("timeout"))
	if _, err := allow(lim, context.Background(), checks...); err != nil {
		t.Fatal(err)
	}
	r.primary.Fail(nil)
	d, err := allow(lim, context.Background(), checks...)
	if err != nil || !d.Allowed {
		t.Fatalf("the return call: %+v, %v", d, err)
	}
	if err := lim.Refund(context.Background(), checks, &d); err != nil {
		t.Fatal(err)
	}
	peek, err := allow(sluice.NewLimiter(r.remote), context.Background(), sluice.Check{Key: "k", Limit: l})
	if err != nil || peek.Remaining != 9 {
		t.Errorf("the primary has %d left (%v), want 9: the fallback's unit charged, the return call's refunded", peek.Remaining, err)
	}
}

// refundable is a flaky primary whose charges its remote store refunds.
type refundable struct {
	*storetest.Flaky
	remote *memory.Store
}

func (s refundable) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	return s.remote.Refund(ctx, checks, charged)
}

// A return call that the share refuses still reaches the primary (its
// charge is the primary's health check): that charge is bounded by the
// Store's timeout, as every call to the primary is, so a primary that
// hangs (stopped, not down) costs a caller the timeout, not its deadline.
func TestAReturnCallsChargeIsBoundedByTheTimeout(t *testing.T) {
	var hang atomic.Bool
	var r *failoverRig
	var charged atomic.Int64
	r = newFailoverRig(t, failover.Options{Instances: 2, Timeout: 20 * time.Millisecond,
		Charge: func(ctx context.Context, checks []sluice.Check) error {
			if hang.Load() {
				<-ctx.Done()
				return ctx.Err()
			}
			return chargeRemote(ctx, r, checks, &charged)
		}})
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
	r.primary.Fail(errors.New("down"))
	for range 8 { // the breaker opens after 5; the share of 5 is spent
		r.allow(t, check)
	}
	r.primary.Fail(nil)
	hang.Store(true)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	d, err := allow(r.limiter, ctx, check)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the probe took %v with a 20ms timeout (%+v, %v)", took, d, err)
	}
	if err != nil || d.Allowed {
		t.Errorf("the probe: %+v, %v; want refused by the share", d, err)
	}
	if st := r.failover.Stats(); st.Breaker != failover.BreakerOpen || st.StoreErrors != failover.DefaultBreakerFailures+1 {
		t.Errorf("stats %+v, want the probe's timeout a store error that opened the breaker again", st)
	}
}

// A caller that gives up during a return call gets an error wrapping its
// context's error, never the share's decision, and is not counted as a
// fallback nor against the primary.
func TestACallerGivingUpDuringAReturnCallGetsAnError(t *testing.T) {
	r, check, _ := outage(t)
	for range failover.DefaultBreakerFailures {
		r.allow(t, sluice.Check{Key: "k", Limit: check.Limit}) // peeks: the share stays whole
	}
	r.primary.Fail(nil)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	if d := r.allow(t, check); !d.Allowed {
		t.Fatalf("the probe: %+v, want admitted", d)
	}
	r.primary.Hang = true
	before, fallbacks := r.failover.Stats(), r.fallbackCount()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	d, err := allow(r.limiter, ctx, check)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a return call whose caller gave up: %+v, %v; want an error wrapping context.Canceled", d, err)
	}
	if after := r.failover.Stats(); after.StoreErrors != before.StoreErrors || after.FallbackDecisions != before.FallbackDecisions || r.fallbackCount() != fallbacks {
		t.Errorf("stats %+v after, %+v before: the caller's giving up was counted", after, before)
	}
}

// chargeLikeRedis charges checks to r's remote store as redis.Store.Charge
// does: concurrency checks are skipped, and a charge of nothing else is
// no call at all (it cannot tell whether the primary is back).
func chargeLikeRedis(ctx context.Context, r *failoverRig, checks []sluice.Check, charged *atomic.Int64) error {
	var rest []sluice.Check
	for _, c := range checks {
		if c.Limit.Algorithm() != sluice.AlgorithmConcurrency {
			rest = append(rest, c)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return chargeRemote(ctx, r, rest, charged)
}

// A probe whose checks are all concurrency limits (decided locally while
// returning, never charged) must still reach the primary: a primary still
// down keeps the breaker open, and is not reported recovered.
func TestAProbeOfConcurrencyChecksReachesThePrimary(t *testing.T) {
	var r *failoverRig
	var charged atomic.Int64
	r = newFailoverRig(t, failover.Options{Instances: 2,
		Charge: func(ctx context.Context, checks []sluice.Check) error {
			return chargeLikeRedis(ctx, r, checks, &charged)
		}})
	check := sluice.Check{Key: "k", Limit: sluice.Concurrency(100, time.Minute), Cost: 1}
	r.primary.Fail(storetest.ErrRedisDown)
	for range failover.DefaultBreakerFailures {
		r.allow(t, check)
	}
	if st := r.failover.Stats(); st.Breaker != failover.BreakerOpen {
		t.Fatalf("stats %+v, want open", st)
	}
	calls := r.primary.Calls.Load()
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.allow(t, check) // the probe, the primary still down
	if st := r.failover.Stats(); st.Breaker != failover.BreakerOpen || st.Returning != 0 {
		t.Errorf("after a probe of a primary still down: %+v, want open again, not returning", st)
	}
	if r.primary.Calls.Load() == calls {
		t.Error("the probe never reached the primary")
	}
	r.primary.Fail(nil)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.allow(t, check)
	if st := r.failover.Stats(); st.Breaker != failover.BreakerClosed {
		t.Errorf("after a probe of a primary that is back: %+v, want closed", st)
	}
}

// nodeDown is the error of a primary one node of which is down, naming it.
type nodeDown string

func (e nodeDown) Error() string      { return "node " + string(e) + " is down" }
func (e nodeDown) FailedNode() string { return string(e) }

// namingStore is a nodeStore whose errors name the node that failed.
type namingStore struct{ nodeStore }

func (s *namingStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if err := s.nodeStore.Apply(ctx, checks, out); err != nil {
		down, _ := s.down.Load().(string)
		return nodeDown(down)
	}
	return nil
}

// A return call that fails on one node of several, the error naming it,
// counts against that node only, as a call on the primary does: the
// healthy node's breaker and counts are untouched.
func TestAFailedReturnCallBlamesTheNodeThatFailed(t *testing.T) {
	remote, local := memory.New(), memory.New()
	defer remote.Close()
	defer local.Close()
	primary := &namingStore{nodeStore{next: remote}}
	f := mustFailover(primary, local, failover.Options{Node: nodeOf, Instances: 2,
		Charge: func(context.Context, []sluice.Check) error { return nil }})
	lim := sluice.NewLimiter(f)
	l := sluice.FixedWindow(1000, time.Hour)
	checks := []sluice.Check{{Key: "a1", Limit: l, Cost: 1}, {Key: "b1", Limit: l, Cost: 1}}
	primary.down.Store("b")
	for range 2 { // the first falls back, the second returns and fails again
		if d, err := allow(lim, context.Background(), checks...); err != nil || !d.Allowed {
			t.Fatalf("%+v, %v", d, err)
		}
	}
	st := f.Stats()
	if a := st.Nodes["a"]; a.StoreErrors != 0 || a.FallbackDecisions != 0 {
		t.Errorf("node a: %+v, want no store error nor fallback: only b failed", a)
	}
	if b := st.Nodes["b"]; b.StoreErrors != 2 || b.FallbackDecisions != 2 {
		t.Errorf("node b: %+v, want 2 store errors and 2 fallbacks", b)
	}
}
