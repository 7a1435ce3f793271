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

// slowPrimary bounds each of its calls by timeout itself, as Redis's Store
// does, and takes delay to answer one while slow is set.
type slowPrimary struct {
	next    sluice.Store
	timeout time.Duration
	delay   time.Duration
	slow    atomic.Bool
	down    atomic.Bool
}

// wait is one round trip: delay while slow, bounded by timeout and ctx.
func (p *slowPrimary) wait(ctx context.Context) error {
	if p.down.Load() {
		return storetest.ErrRedisDown
	}
	if !p.slow.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	select {
	case <-time.After(p.delay):
		return nil
	case <-ctx.Done():
		return errors.Join(sluice.ErrStoreUnavailable, ctx.Err())
	}
}

func (p *slowPrimary) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if err := p.wait(ctx); err != nil {
		return err
	}
	return p.next.Apply(ctx, checks, out)
}

func (p *slowPrimary) charge(ctx context.Context, checks []sluice.Check, _ []string) error {
	return p.wait(ctx)
}

// A primary that bounds each of its round trips by its own timeout (the
// failover's Timeout negative) and answers each within it, but slowly:
// the call that charges what was admitted locally and then has the
// primary decide is held to ChargeTimeout in all, not to one per round
// trip, and is decided by the OnError rule when the charge leaves the
// decision too little time.
func TestAChargeAndTheDecisionAfterItShareOneTimeout(t *testing.T) {
	// A Timeout long beside a loaded machine's late timers (60 ms late
	// seen, 150 ms in a burst, when it was 200 ms).
	const timeout = time.Second
	local := memory.New()
	remote := memory.New()
	t.Cleanup(func() { local.Close(); remote.Close() })
	p := &slowPrimary{next: remote, timeout: timeout, delay: timeout * 3 / 4}
	f, err := failover.New(p, local, failover.Options{Timeout: -1, ChargeTimeout: timeout, ChargeOnce: p.charge})
	if err != nil {
		t.Fatal(err)
	}
	checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(100, time.Hour), Cost: 1}}
	out := make([]sluice.Status, 1)
	p.down.Store(true)
	if err := f.Apply(context.Background(), checks, out); err != nil || !out[0].Allowed {
		t.Fatalf("with the primary down: %+v, %v; want admitted locally", out[0], err)
	}
	p.down.Store(false)
	p.slow.Store(true)
	start := time.Now()
	err = f.Apply(context.Background(), checks, out)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("back on a slow primary: %v", err)
	}
	// A charge and a decision of 750 ms each take 1.5 s; one 1 s
	// Timeout, and room for scheduling noise, is 1.25 s.
	if bound := timeout * 5 / 4; took > bound {
		t.Errorf("the call back on the primary took %v, past %v: the charge (%v) and the decision (%v) each got a Timeout of %v",
			took, bound, p.delay, p.delay, timeout)
	}
	st := f.Stats()
	if st.FallbackDecisions != 2 || st.StoreErrors != 2 {
		t.Errorf("Stats %+v: want 2 fallback decisions and 2 store errors (the outage's, and the decision the charge left no time)", st)
	}
}

// A call made as a return period ends waits for the return calls still
// in flight (each within its Timeout) before the primary decides alone:
// that wait and its decision share one Timeout too.
func TestACallThatWaitsForAReturnCallSharesItsTimeout(t *testing.T) {
	// A Timeout long beside the return period: the call below, made a
	// period's end after the return call, would wait most of that call's
	// Timeout (about 850 ms) and then a Timeout of its own, far past the
	// bound, while a loaded machine's timers may fire tens of ms late.
	const timeout = time.Second
	const openFor = 100 * time.Millisecond // a return period of 400 ms
	local := memory.New()
	remote := memory.New()
	t.Cleanup(func() { local.Close(); remote.Close() })
	p := &slowPrimary{next: remote, timeout: timeout, delay: 2 * timeout}
	f, err := failover.New(p, local, failover.Options{Timeout: -1, ChargeTimeout: timeout, ChargeOnce: p.charge,
		Breaker: failover.BreakerOptions{OpenFor: openFor}})
	if err != nil {
		t.Fatal(err)
	}
	apply := func() time.Duration {
		checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(100, time.Hour), Cost: 1}}
		start := time.Now()
		if err := f.Apply(context.Background(), checks, make([]sluice.Status, 1)); err != nil {
			t.Errorf("Apply: %v", err)
		}
		return time.Since(start)
	}
	p.down.Store(true)
	apply() // decided locally
	p.down.Store(false)
	apply() // returns: charged, and the return period starts
	if st := f.Stats(); st.Returning != 1 {
		t.Fatalf("Stats %+v: want the node returning", st)
	}
	time.Sleep(4*openFor - openFor)
	p.slow.Store(true) // every call now fails after the primary's Timeout
	inFlight := make(chan time.Duration)
	go func() { inFlight <- apply() }() // a return call, held a Timeout
	time.Sleep(openFor + openFor/2)     // past the period's end, the return call in flight
	if st := f.Stats(); st.Returning != 0 {
		t.Fatalf("Stats %+v: want the return period over", st)
	}
	took := apply()
	<-inFlight
	t.Logf("the call after the return period took %v", took)
	// One Timeout and room for a loaded machine (1.2 s seen); waiting for
	// the return call, then a Timeout of its own, takes about 1.85 s.
	if bound := timeout * 3 / 2; took > bound {
		t.Errorf("the call after the return period took %v, past %v: it waited for the return call in flight, then a Timeout of its own (%v)",
			took, bound, timeout)
	}
}
