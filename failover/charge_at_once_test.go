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

// Options.Node: the keys of healthy nodes stay on the primary while
// another node is down. A call spanning the down node b (a global key) and
// the healthy node a (Alice's key of a per-client limit) is decided
// locally, and what it admitted on a is charged to a at once; a's other
// keys, even of the same limit, are decided by the primary alone: Bob,
// whose key of that limit is on a and who never spans b, gets his 10 of a
// limit of 10 an hour, not this instance's share of it (5 of 10, two
// instances).
func TestAClientOnAHealthyNodeKeepsThePrimaryWhenAnotherClientOfItsLimitSpansADownNode(t *testing.T) {
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer remote.Close()
	primary, f := onNodes(t, clk, remote, failover.Options{
		Charge: func(context.Context, []sluice.Check) error { return nil }})
	lim := sluice.NewLimiter(f)
	ctx := context.Background()

	per := sluice.FixedWindow(10, time.Hour).Named("per-client")
	global := sluice.FixedWindow(1000, time.Hour).Named("global")
	alice := []sluice.Check{{Key: "a-alice", Limit: per, Cost: 1}, {Key: "b-global", Limit: global, Cost: 1}}
	bob := sluice.Check{Key: "a-bob", Limit: per, Cost: 1}
	primary.down.Store("b")
	admitted := 0
	for range 10 {
		allow(lim, ctx, alice...) // Alice's route, now and then
		clk.Advance(10 * time.Millisecond)
		d, err := allow(lim, ctx, bob)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		}
		clk.Advance(10 * time.Millisecond)
	}
	if admitted != 10 {
		t.Errorf("Bob, all of whose keys are on the healthy master a, none ever decided locally: %d of 10 admitted on a limit of 10 an hour "+
			"(the primary had room: it counted only his calls); node a: %+v", admitted, f.Stats().Nodes["a"])
	}
}

// Every instance has charged what it admitted before any decides on the
// primary alone (the return period's promise, redis/doc.go's bound): the
// units a call spanning a down node admits locally on a healthy node's key
// are charged there at once, so that another instance deciding that key
// on the primary alone counts them. Two instances, a-k on the healthy node
// a limited to 10 an hour: the first admits its share (5) of a-k in calls
// that span the down node b, the second asks a-k alone, decided by the
// primary, which finds the first's 5: 10 admitted in all, not 15.
func TestUnitsAdmittedLocallyOnAHealthyNodeAreChargedBeforeAnotherInstanceDecidesThemAlone(t *testing.T) {
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer remote.Close()
	down := &nodeStore{next: remote}
	down.down.Store("b")
	var instances []*sluice.Limiter
	for range 2 {
		primary, f := onNodes(t, clk, remote, failover.Options{
			Charge: func(ctx context.Context, checks []sluice.Check) error {
				return chargeLeft(ctx, remote, down, checks)
			}})
		primary.down.Store("b")
		instances = append(instances, sluice.NewLimiter(f))
	}
	ctx := context.Background()
	per := sluice.FixedWindow(10, time.Hour).Named("per")
	global := sluice.FixedWindow(1000, time.Hour).Named("global")
	route := []sluice.Check{{Key: "a-k", Limit: per, Cost: 1}, {Key: "b-global", Limit: global, Cost: 1}}
	total := 0
	ask := func(lim *sluice.Limiter, checks ...sluice.Check) {
		d, err := allow(lim, ctx, checks...)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			total++
		}
		clk.Advance(10 * time.Millisecond)
	}
	for range 10 { // the first instance: the spanning route only
		ask(instances[0], route...)
	}
	for range 10 { // the second: a-k alone
		ask(instances[1], route[0])
	}
	for range 10 { // the first again, the route and a-k alone
		ask(instances[0], route...)
		ask(instances[0], route[0])
	}
	if total != 10 {
		t.Errorf("%d admitted on a-k (master a healthy throughout) of a limit of 10 an hour; want 10", total)
	}
}

// A healthy node's keys admitted locally whose charge at once fails (the
// node stops answering the charge) fall back with the whole node, as the
// keys of a node that failed do: the node's calls return, each decided by
// this instance's share and the primary together, and the failed charge
// is a store error of the node; the charge is sent again, under its id,
// before the primary decides the key.
func TestAHealthyNodeWhoseChargeAtOnceFailsReturns(t *testing.T) {
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer remote.Close()
	var failCharge atomic.Bool
	var ids []string
	primary, f := onNodes(t, clk, remote, failover.Options{
		ChargeOnce: func(_ context.Context, checks []sluice.Check, chargeIDs []string) error {
			for i := range checks {
				if nodeOf(&checks[i]) == "a" {
					ids = append(ids, chargeIDs[i])
				}
			}
			if failCharge.Load() {
				return errors.New("charge lost")
			}
			return nil
		}})
	lim := sluice.NewLimiter(f)
	ctx := context.Background()
	per := sluice.FixedWindow(10, time.Hour).Named("per-client")
	global := sluice.FixedWindow(1000, time.Hour).Named("global")
	alice := []sluice.Check{{Key: "a-alice", Limit: per, Cost: 1}, {Key: "b-global", Limit: global, Cost: 1}}
	bob := []sluice.Check{{Key: "a-bob", Limit: per, Cost: 1}}
	primary.down.Store("b")
	failCharge.Store(true)
	if d, err := allow(lim, ctx, alice...); err != nil || !d.Allowed {
		t.Fatalf("Alice's spanning call while b is down: %+v, %v", d, err)
	}
	if f.Direct(bob) {
		t.Error("Direct of a key of a whose charge at once failed: true, want false (a falls back)")
	}
	if a := f.Stats().Nodes["a"]; a.StoreErrors != 1 {
		t.Errorf("node a after its charge at once failed: %+v, want 1 store error", a)
	}
	failCharge.Store(false)
	before := f.Stats().FallbackDecisions
	if d, err := allow(lim, ctx, bob...); err != nil || !d.Allowed {
		t.Fatalf("Bob's call as a returns: %+v, %v", d, err)
	}
	if got := f.Stats().FallbackDecisions; got != before {
		t.Errorf("Bob's return call, the primary answering: %d fallbacks, want %d", got, before)
	}
	if len(ids) < 2 || ids[len(ids)-1] != ids[0] {
		t.Errorf("charge ids of a-alice: %q: the failed charge is sent again under its id", ids)
	}
	if !f.Stats().Nodes["a"].Returning {
		t.Error("node a after a return call succeeded: not returning, want its return period")
	}
}

// The charge at once shares the call's bound (Options.Timeout): a call
// whose primary took most of it to fail on the down node b has only the
// rest for charging the healthy node a, and is decided within the bound
// all the same when the charge does not finish in it (a charge given a
// Timeout of its own would end the call 240 ms past it; the bound leaves a
// loaded machine 160 ms). The keys of the
// limit it admitted on a then return (see Store); a's other keys stay the
// primary's alone.
func TestTheChargeAtOnceSharesTheCallsBound(t *testing.T) {
	const timeout = 400 * time.Millisecond
	remote := memory.New(memory.WithSweepInterval(0))
	local := memory.New(memory.WithSweepInterval(0))
	defer remote.Close()
	defer local.Close()
	primary := &slowNamingStore{namingStore{nodeStore{next: remote}}, 240 * time.Millisecond}
	primary.down.Store("b")
	f := mustFailover(primary, local, failover.Options{Node: nodeOf, Instances: 2, Timeout: timeout,
		Charge: func(ctx context.Context, _ []sluice.Check) error {
			<-ctx.Done() // a slow to answer
			return ctx.Err()
		}})
	lim := sluice.NewLimiter(f)
	per := sluice.FixedWindow(10, time.Hour).Named("per-client")
	global := sluice.FixedWindow(1000, time.Hour).Named("global")
	alice := []sluice.Check{{Key: "a-alice", Limit: per, Cost: 1}, {Key: "b-global", Limit: global, Cost: 1}}
	start := time.Now()
	if d, err := allow(lim, context.Background(), alice...); err != nil || !d.Allowed {
		t.Fatalf("Alice's spanning call while b is down: %+v, %v", d, err)
	}
	if took := time.Since(start); took > timeout+160*time.Millisecond {
		t.Errorf("the call took %v: want its Timeout (%v), the charge at once within it", took, timeout)
	}
	if f.Direct([]sluice.Check{{Key: "a-bob", Limit: per, Cost: 1}}) {
		t.Error("Direct of a key of a of the limit whose charge at once did not finish: true, want false (the limit's keys return)")
	}
	other := sluice.FixedWindow(10, time.Hour).Named("other")
	if !f.Direct([]sluice.Check{{Key: "a-carol", Limit: other, Cost: 1}}) {
		t.Error("Direct of a key of a of another limit: false, want true (a did not fail)")
	}
}

// slowNamingStore is a namingStore whose calls to the down node fail after
// delay.
type slowNamingStore struct {
	namingStore
	delay time.Duration
}

func (s *slowNamingStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	err := s.namingStore.Apply(ctx, checks, out)
	if err != nil {
		time.Sleep(s.delay)
	}
	return err
}

// A caller that gives up gets an error wrapping its context's error, never
// a fallback decision (the package's contract), also when it gives up
// while a call spanning the down node b charges what it admitted on the
// healthy node a at once. What the local decision gave the call goes back
// to this instance's share, the call is no fallback, and a's keys stay the
// primary's: the caller's cancellation is not the call's bound cutting
// the charge short. The same holds of a return call that fails on b.
func TestACallerWhoGivesUpDuringTheChargeAtOnceGetsAnError(t *testing.T) {
	for _, returning := range []bool{false, true} {
		clk := storetest.NewClock()
		remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
		defer remote.Close()
		var giveUp atomic.Pointer[context.CancelFunc]
		charges := 0
		primary, f := onNodes(t, clk, remote, failover.Options{
			ChargeOnce: func(ctx context.Context, checks []sluice.Check, _ []string) error {
				cancel := giveUp.Load()
				if cancel == nil || nodeOf(&checks[0]) != "a" {
					return nil
				}
				charges++
				(*cancel)() // the caller gives up while a's charge is on its way
				<-ctx.Done()
				return ctx.Err()
			}})
		primary.down.Store("b")
		l := sluice.FixedWindow(100, time.Hour).Named("per-client") // a share of 50
		checks := []sluice.Check{{Key: "a1", Limit: l, Cost: 1}, {Key: "b1", Limit: l, Cost: 1}}
		out := make([]sluice.Status, 2)
		used := int64(0) // of a1's share
		if returning {   // b falls back: its next call returns
			if err := f.Apply(context.Background(), checks, out); err != nil || !out[0].Allowed {
				t.Fatalf("first call while b is down: %+v, %v", out, err)
			}
			used++
		}
		before := f.Stats().FallbackDecisions
		ctx, cancel := context.WithCancel(context.Background())
		giveUp.Store(&cancel)
		err := f.Apply(ctx, checks, out)
		giveUp.Store(nil)
		cancel()
		if charges == 0 {
			t.Fatalf("returning %v: no charge at once was made (err %v): the scenario did not happen", returning, err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("returning %v: Apply after the caller gave up: err %v, statuses %+v; want an error wrapping context.Canceled", returning, err, out)
		}
		if got := f.Stats().FallbackDecisions; got != before {
			t.Errorf("returning %v: %d fallbacks after the call given up, want %d", returning, got, before)
		}
		if !f.Direct([]sluice.Check{{Key: "a2", Limit: l, Cost: 1}}) {
			t.Errorf("returning %v: Direct of a key of a of the limit: false, want true (a did not fail, nor its charge)", returning)
		}
		if err := f.Apply(context.Background(), checks, out); err != nil || !out[0].Allowed {
			t.Fatalf("returning %v: the next call: %+v, %v", returning, out, err)
		}
		if want := 50 - used - 1; out[0].Remaining != want {
			t.Errorf("returning %v: a1's share after the next call: %d left, want %d (the call given up took nothing)", returning, out[0].Remaining, want)
		}
	}
}
