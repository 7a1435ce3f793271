package failover_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// onceCharger is a ChargeOnce on a rig's remote store that takes each id
// once, as Redis's does, and records every charge sent. While lose is
// set, a call takes its charges and then fails, as a call whose reply is
// lost does; while drop is set, it fails before taking any.
type onceCharger struct {
	r *failoverRig

	mu         sync.Mutex
	lose, drop bool
	taken      map[string]bool
	sent       [][]sentCharge
}

type sentCharge struct {
	id   string
	cost int64
}

func (o *onceCharger) charge(ctx context.Context, checks []sluice.Check, ids []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var call []sentCharge
	for i, c := range checks {
		call = append(call, sentCharge{ids[i], c.Cost})
	}
	o.sent = append(o.sent, call)
	if o.drop {
		return errors.New("connection reset")
	}
	if o.taken == nil {
		o.taken = map[string]bool{}
	}
	for i, c := range checks {
		if ids[i] == "" || o.taken[ids[i]] {
			continue
		}
		o.taken[ids[i]] = true
		if err := chargeRemote(ctx, o.r, []sluice.Check{c}, new(atomic.Int64)); err != nil {
			return err
		}
	}
	if o.lose {
		return context.DeadlineExceeded
	}
	return nil
}

// calls returns the charges sent so far, call by call.
func (o *onceCharger) calls() [][]sentCharge {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([][]sentCharge(nil), o.sent...)
}

func (o *onceCharger) set(lose, drop bool) {
	o.mu.Lock()
	o.lose, o.drop = lose, drop
	o.mu.Unlock()
}

// newOnceRig is a rig of one instance whose ChargeOnce is an onceCharger,
// with the primary down.
func newOnceRig(t *testing.T, opts failover.Options) (*failoverRig, *onceCharger) {
	o := &onceCharger{}
	opts.ChargeOnce = o.charge
	o.r = newFailoverRig(t, opts)
	o.r.primary.Fail(errors.New("down"))
	return o.r, o
}

// A charge whose call failed after the primary took it is sent again
// under its id, with no more units, and taken once; the units admitted
// since go under an id of their own, sent once the doubt is settled. 5
// units admitted: the primary counts 5.
func TestAChargeInDoubtIsSentAgainUnderItsID(t *testing.T) {
	r, o := newOnceRig(t, failover.Options{})
	l := sluice.FixedWindow(10, time.Hour)
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 3})
	r.primary.Fail(nil)
	o.set(true, false)
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 1}) // the charge of 3 is taken, its reply lost
	o.set(false, false)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 1})

	calls := o.calls()
	if len(calls) != 3 || len(calls[0]) != 1 || len(calls[1]) != 1 || len(calls[2]) != 1 {
		t.Fatalf("charges sent %v, want [[x 3]] [[x 3]] [[y 1]]", calls)
	}
	x, again, y := calls[0][0], calls[1][0], calls[2][0]
	if x.cost != 3 || again != x || y.cost != 1 || y.id == x.id || x.id == "" || y.id == "" {
		t.Errorf("charges sent %v, want [[x 3]] [[x 3]] [[y 1]]", calls)
	}
	out := make([]sluice.Status, 1)
	if err := r.remote.Apply(context.Background(), []sluice.Check{{Key: "k", Limit: l}}, out); err != nil || out[0].Remaining != 5 {
		t.Errorf("the primary: %+v, %v; want 5 left after 5 admitted", out[0], err)
	}
	if n := r.failover.Settle(context.Background()); n != nil {
		t.Errorf("Settle: %v, want nothing left to charge", n)
	}
	if got := len(o.calls()); got != 3 {
		t.Errorf("%d charge calls after Settle, want 3: nothing was owed", got)
	}
}

// A charge in doubt for longer than its limit's horizon is dropped unsent:
// its units count nowhere any more, and the primary may have forgotten its
// id. The units admitted after it are charged under an id of their own.
func TestAChargeInDoubtPastItsHorizonIsDropped(t *testing.T) {
	r, o := newOnceRig(t, failover.Options{})
	l := sluice.SlidingLog(10, time.Minute)
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 3})
	r.primary.Fail(nil)
	o.set(false, true)
	for range failover.DefaultBreakerFailures { // charges of 3 fail; the breaker opens
		r.allow(t, sluice.Check{Key: "k", Limit: l})
	}
	if st := r.failover.Stats(); st.Breaker != failover.BreakerOpen {
		t.Fatalf("stats %+v, want the breaker open", st)
	}
	before := len(o.calls())
	r.clk.Advance(failover.ChargeHorizon(l))
	r.primary.Fail(errors.New("down"))
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 2}) // the probe: the primary still down
	r.primary.Fail(nil)
	o.set(false, false)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.allow(t, sluice.Check{Key: "k", Limit: l})

	calls := o.calls()
	if len(calls) != before+1 || len(calls[before]) != 1 || calls[before][0].cost != 2 || calls[before][0].id == calls[0][0].id {
		t.Errorf("charges sent past the horizon %v; want one, [new-id 2], the doubt %v dropped", calls[before:], calls[0][0])
	}
	out := make([]sluice.Status, 1)
	if err := r.remote.Apply(context.Background(), []sluice.Check{{Key: "k", Limit: l}}, out); err != nil || out[0].Remaining != 8 {
		t.Errorf("the primary: %+v, %v; want 8 left: the 2 admitted after the horizon", out[0], err)
	}
}

func TestChargeHorizonIsHowLongAUnitCounts(t *testing.T) {
	for _, c := range []struct {
		name string
		l    sluice.Limit
		want time.Duration
	}{
		{"a fixed window counts a unit to its window's end", sluice.FixedWindow(10, time.Minute), time.Minute},
		{"a calendar month for its longest, 31 days", sluice.Calendar(10, sluice.Month), 31 * 24 * time.Hour},
		{"a sliding log for a window", sluice.SlidingLog(10, time.Minute), time.Minute},
		{"a sliding counter for two: the previous window weighs", sluice.SlidingCounter(10, time.Minute), 2 * time.Minute},
		{"a bucket until a whole burst refills", sluice.TokenBucket(10, time.Hour).WithBurst(20), 2*time.Hour + time.Microsecond},
		{"GCRA likewise", sluice.GCRA(3, time.Second), time.Second + time.Microsecond},
		{"a leaky queue and its wait", sluice.LeakyBucket(10, time.Second).WithMaxWait(time.Second), 2*time.Second + time.Microsecond},
		{"concurrency is never charged", sluice.Concurrency(10, time.Minute), 0},
	} {
		if got := failover.ChargeHorizon(c.l); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A refund that empties an account of its units leaves its charge in
// doubt, which still goes to the primary: 3 admitted locally, their
// charge failing before the primary takes it, then 2 more admitted and
// refunded: the primary must count the 3 (before: the account closed with
// the refund, and the charge in doubt was never sent again).
func TestARefundKeepsTheChargeInDoubt(t *testing.T) {
	r, o := newOnceRig(t, failover.Options{})
	ctx := context.Background()
	l := sluice.FixedWindow(10, time.Hour)
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 3})
	r.primary.Fail(nil)
	o.set(false, true)
	two := sluice.Check{Key: "k", Limit: l, Cost: 2}
	d := r.allow(t, two) // the charge of 3 fails: decided locally
	if err := r.limiter.Refund(ctx, []sluice.Check{two}, &d); err != nil {
		t.Fatal(err)
	}
	o.set(false, false)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.allow(t, sluice.Check{Key: "k", Limit: l})
	out := make([]sluice.Status, 1)
	if err := r.remote.Apply(ctx, []sluice.Check{{Key: "k", Limit: l}}, out); err != nil || out[0].Remaining != 7 {
		t.Errorf("the primary: %+v, %v; want 7 left: the 3 in doubt charged", out[0], err)
	}
}

// A charge's horizon is elapsed time, as Redis's memory of its id is: a
// clock set back an hour while the charge is in doubt does not keep it
// an hour longer, to be sent again once the primary has forgotten the id.
func TestAClockSetBackDoesNotLengthenAChargesHorizon(t *testing.T) {
	r, o := newOnceRig(t, failover.Options{})
	l := sluice.SlidingLog(10, time.Minute)
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 3})
	r.primary.Fail(nil)
	o.set(false, true)
	for range failover.DefaultBreakerFailures { // charges of 3 fail; the breaker opens
		r.allow(t, sluice.Check{Key: "k", Limit: l})
	}
	before := len(o.calls())
	r.clk.Advance(-time.Hour)
	r.allow(t, sluice.Check{Key: "k", Limit: l}) // the breaker reads its clock, set back
	r.failover.Stats()                           // and so does the Store
	r.clk.Advance(failover.ChargeHorizon(l))
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 2}) // the probe
	for _, call := range o.calls()[before:] {
		for _, c := range call {
			if c.id == o.calls()[0][0].id {
				t.Fatalf("charges sent past the horizon %v: the doubt %v sent again", o.calls()[before:], o.calls()[0][0])
			}
		}
	}
}

// The units a charge owes are the ones the local state still counts: the
// latest admitted. A charge in doubt whose units a bucket has refilled
// since takes nothing from the units admitted after it: 3 admitted and
// charged (the reply lost), 18 s later (3 tokens refilled) 2 more admitted
// while the charge of 3 fails again: the primary must count the 2 (before:
// the 2 went to the doubt's retry, which the primary skipped, and were
// never charged).
func TestAChargeInDoubtTakesNothingFromLaterUnits(t *testing.T) {
	r, o := newOnceRig(t, failover.Options{})
	ctx := context.Background()
	l := sluice.TokenBucket(10, time.Minute)
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 3})
	r.primary.Fail(nil)
	o.set(true, false)
	r.allow(t, sluice.Check{Key: "k", Limit: l}) // the charge of 3 is taken, its reply lost
	r.clk.Advance(18 * time.Second)
	o.set(false, true)
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 2}) // its retry fails: decided locally
	o.set(false, false)
	r.allow(t, sluice.Check{Key: "k", Limit: l})
	out := make([]sluice.Status, 1)
	if err := r.remote.Apply(ctx, []sluice.Check{{Key: "k", Limit: l}}, out); err != nil || out[0].Remaining != 8 {
		t.Errorf("the primary: %+v, %v; want 8 left: the 3 refilled, the 2 charged", out[0], err)
	}
}
