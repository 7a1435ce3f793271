// Package conformance is the suite every sluice.Store must pass: scenarios
// of (time, checks) covering each algorithm and the batch rules, with leases
// released (sluice.Releaser) and charges refunded (sluice.Refunder) between
// calls, plus seeded random ones, decided by the store under test and by the
// pure reference — sluice.DecideBatch, and internal/algo.Refund for refunds,
// over states kept in the test — at the same instants. Every Status field
// of every check must be identical.
//
// A store joins the suite with one test:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, func(t *testing.T, clock *conformance.Clock) sluice.Store {
//			s := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The store must read its time from clock and must not forget a state
// while the reference still holds it (the reference never forgets): turn
// off background expiry, or make it longer than a test runs.
package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
)

// Clock is a settable test clock, safe for concurrent use. Stores under test
// read it; the suite moves it between steps.
type Clock struct{ us atomic.Int64 }

// NewClock returns a Clock showing t.
func NewClock(t time.Time) *Clock {
	c := &Clock{}
	c.us.Store(sluice.MicrosSinceEpoch(t))
	return c
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return sluice.TimeFromMicros(c.us.Load()) }

// Micros returns the clock's time in µs since sluice.Epoch.
func (c *Clock) Micros() int64 { return c.us.Load() }

// Advance moves the clock by d, backwards when d < 0.
func (c *Clock) Advance(d time.Duration) { c.us.Add(int64(d / time.Microsecond)) }

// NewStore returns a fresh store reading its time from clock. It registers
// its own cleanup with t.
type NewStore func(t *testing.T, clock *Clock) sluice.Store

// Run runs every scenario of Scenarios and of Random (seeds 1 to 60) on
// stores from newStore, each scenario in its own parallel subtest with its
// own clock and store.
func Run(t *testing.T, newStore NewStore) {
	run := fmt.Sprintf("%x", time.Now().UnixNano()) // keys unique to this run
	t.Run("scenarios", func(t *testing.T) {
		for i, sc := range Scenarios() {
			t.Run(sc.Name, func(t *testing.T) {
				t.Parallel()
				RunScenario(t, newStore, fmt.Sprintf("%s.s%d", run, i), sc)
			})
		}
	})
	t.Run("random", func(t *testing.T) {
		for seed := uint64(1); seed <= 60; seed++ {
			sc := Random(seed)
			t.Run(sc.Name, func(t *testing.T) {
				t.Parallel()
				RunScenario(t, newStore, fmt.Sprintf("%s.r%d", run, seed), sc)
			})
		}
	})
}

// RunScenario plays sc on a store from newStore and on the reference, and
// fails t at the first Status that differs. Every check's key is prefixed
// with prefix + "/", so that scenarios sharing a Redis never share state.
func RunScenario(t *testing.T, newStore NewStore, prefix string, sc Scenario) {
	t.Helper()
	start := sc.Start
	if start.IsZero() {
		start = DefaultStart
	}
	clock := NewClock(start)
	store := newStore(t, clock)
	ref := newReference()
	ctx := context.Background()
	calls := make([][]sluice.Check, len(sc.Steps))
	leases := make([][]int64, len(sc.Steps))
	charges := make([][]int64, len(sc.Steps))
	for n, step := range sc.Steps {
		clock.Advance(step.Advance)
		for _, k := range step.Release {
			if k >= n {
				t.Fatalf("step %d: the scenario is wrong: it releases the leases of step %d, not an earlier one", n, k)
			}
			rel, ok := store.(sluice.Releaser)
			if !ok {
				t.Fatalf("step %d: the store (%T) is not a sluice.Releaser", n, store)
			}
			if err := rel.Release(ctx, calls[k], leases[k]); err != nil {
				t.Fatalf("step %d: Release of step %d's leases: %v", n, k, err)
			}
			ref.release(calls[k], leases[k])
		}
		for _, rf := range step.Refund {
			if rf.Step >= n || rf.Costs != nil && len(rf.Costs) != len(calls[rf.Step]) {
				t.Fatalf("step %d: the scenario is wrong: it refunds step %d, not an earlier call, or with %d costs for %d checks",
					n, rf.Step, len(rf.Costs), len(calls[rf.Step]))
			}
			refunder, ok := store.(sluice.Refunder)
			if !ok {
				t.Fatalf("step %d: the store (%T) is not a sluice.Refunder", n, store)
			}
			checks := slices.Clone(calls[rf.Step])
			for i, cost := range rf.Costs {
				checks[i].Cost = cost
			}
			if err := refunder.Refund(ctx, checks, charges[rf.Step]); err != nil {
				t.Fatalf("step %d: Refund of step %d's charges: %v", n, rf.Step, err)
			}
			ref.refund(checks, charges[rf.Step])
		}
		if len(step.Checks) == 0 {
			continue
		}
		checks := make([]sluice.Check, len(step.Checks))
		for i, c := range step.Checks {
			c.Key = prefix + "/" + c.Key
			checks[i] = c
		}
		if err := sluice.ValidateChecks(checks); err != nil {
			t.Fatalf("step %d: the scenario is wrong: %v", n, err)
		}
		want, err := ref.apply(checks, clock.Micros())
		if err != nil {
			t.Fatalf("step %d: the reference: %v", n, err)
		}
		got := make([]sluice.Status, len(checks))
		if err := store.Apply(ctx, checks, got); err != nil {
			t.Fatalf("step %d at %s: Apply: %v", n, clock.Now().Format(time.RFC3339Nano), err)
		}
		calls[n] = checks
		for i := range checks {
			leases[n] = append(leases[n], want[i].Lease)
			charges[n] = append(charges[n], want[i].Charged)
			if got[i] != want[i] {
				t.Fatalf("step %d at %s (µs %d), check %d of %d (%s, cost %d):\n got  %s\n want %s\nsteps so far:\n%s",
					n, clock.Now().Format(time.RFC3339Nano), clock.Micros(), i, len(checks), step.Checks[i].Limit,
					step.Checks[i].Cost, fmtStatus(got[i]), fmtStatus(want[i]), history(sc, n))
			}
		}
		if step.Want != nil {
			for i, ok := range step.Want {
				if want[i].Allowed != ok {
					t.Fatalf("step %d check %d: the reference says allowed=%v, the scenario expects %v: "+
						"the scenario no longer exercises what it says", n, i, want[i].Allowed, ok)
				}
			}
		}
	}
}

// reference decides with sluice.DecideBatch over states it keeps forever,
// keyed as sluice.Store says: by key, limit ID and algorithm.
type reference struct {
	states map[refKey]sluice.State
}

type refKey struct {
	key, id string
	alg     sluice.Algorithm
}

func newReference() *reference { return &reference{states: make(map[refKey]sluice.State)} }

func (r *reference) apply(checks []sluice.Check, now int64) ([]sluice.Status, error) {
	keys := make([]refKey, len(checks))
	states := make([]sluice.State, len(checks))
	for i, c := range checks {
		keys[i] = refKey{c.Key, c.Limit.ID(), c.Limit.Algorithm()}
		states[i] = r.states[keys[i]]
	}
	out := make([]sluice.Status, len(checks))
	changed, err := sluice.DecideBatch(checks, states, now, out)
	if err != nil {
		return nil, err
	}
	if changed {
		for i, k := range keys {
			r.states[k] = states[i]
		}
	}
	return out, nil
}

// release gives back leases as sluice.Limit.Release says.
func (r *reference) release(checks []sluice.Check, leases []int64) {
	for i, c := range checks {
		if leases[i] == 0 {
			continue
		}
		k := refKey{c.Key, c.Limit.ID(), c.Limit.Algorithm()}
		r.states[k] = c.Limit.Release(r.states[k], leases[i], c.Cost)
	}
}

// refund takes charges back as internal/algo.Refund says, under each
// check's limit as sluice builds its parameters.
func (r *reference) refund(checks []sluice.Check, charged []int64) {
	for i, c := range checks {
		kind := algo.Kind(c.Limit.Algorithm())
		if charged[i] == 0 || !algo.Refundable(kind) {
			continue
		}
		l := c.Limit
		p, _ := algo.NewParams(kind, l.Quantity(), int64(l.Window()/time.Microsecond), l.Burst(), 0)
		if l.Period() != 0 {
			p = algo.NewCalendarParams(l.Quantity(), algo.Period(l.Period()), int64(l.Offset()/time.Microsecond))
		}
		k := refKey{c.Key, l.ID(), l.Algorithm()}
		r.states[k] = sluice.State(algo.Refund(&p, algo.State(r.states[k]), charged[i], c.Cost))
	}
}

func fmtStatus(s sluice.Status) string {
	retry := s.RetryAfter.String()
	if s.RetryAfter == sluice.Never {
		retry = "never"
	}
	return fmt.Sprintf("allowed=%-5v remaining=%d reset=%v retry=%s delay=%v lease=%d", s.Allowed, s.Remaining, s.ResetAfter, retry, s.Delay, s.Lease)
}

// history describes the steps up to n (the last 12 of them).
func history(sc Scenario, n int) string {
	var b strings.Builder
	from := max(0, n-11)
	if from > 0 {
		fmt.Fprintf(&b, "  … %d earlier steps\n", from)
	}
	for i := from; i <= n; i++ {
		s := sc.Steps[i]
		fmt.Fprintf(&b, "  %d: advance %v:", i, s.Advance)
		if len(s.Release) > 0 {
			fmt.Fprintf(&b, " release the leases of steps %v;", s.Release)
		}
		for _, rf := range s.Refund {
			fmt.Fprintf(&b, " refund step %d", rf.Step)
			if rf.Costs != nil {
				fmt.Fprintf(&b, " at costs %v", rf.Costs)
			}
			b.WriteByte(';')
		}
		for _, c := range s.Checks {
			fmt.Fprintf(&b, " [%s %s cost %d]", c.Key, c.Limit, c.Cost)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
