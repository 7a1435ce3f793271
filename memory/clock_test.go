package memory

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
)

// fakeTime is an exact time a test sets, in µs since sluice.Epoch.
type fakeTime struct{ us atomic.Int64 }

func (f *fakeTime) read() int64 { return f.us.Load() }

// lagging makes s decide at a time the test sets (as the ticker would)
// while its exact reads come from exact. Its resolution is 1 µs, so that
// the limits of most checks tolerate the lag (see clock.tolerates).
func lagging(s *Store, exact *fakeTime) *clock {
	c := &clock{read: exact.read, res: time.Microsecond, stop: s.stop}
	s.clock = c
	return c
}

// set makes c's decisions read t until the next set, as a tick would.
func (c *clock) set(t int64) { c.cached.Store(c.encode(t)) }

// TestLaggingClockPacesFineLimits: a limit of one unit per 100 µs with a
// burst of one, under a decision time that stands still while the exact
// time moves on by 150 µs per request. Decided at the lagging time alone,
// every request after the first would be refused; each must be admitted,
// and a request 50 µs after an admission must be refused with the exact
// RetryAfter.
func TestLaggingClockPacesFineLimits(t *testing.T) {
	s := New(WithSweepInterval(0))
	defer s.Close()
	var exact fakeTime
	start := sluice.MicrosSinceEpoch(conformance.DefaultStart)
	exact.us.Store(start)
	c := lagging(s, &exact)
	c.set(start)
	l := sluice.GCRA(10_000, time.Second).WithBurst(1)
	lim := sluice.NewLimiter(s)
	ctx := context.Background()
	for i := range 20 {
		exact.us.Store(start + int64(i)*150)
		d, err := allow(lim, ctx, sluice.Check{Key: "k", Limit: l, Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			t.Fatalf("request %d, 150 µs after the last, refused (retry after %v)", i, d.RetryAfter)
		}
	}
	exact.us.Add(50)
	d, err := allow(lim, ctx, sluice.Check{Key: "k", Limit: l, Cost: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.RetryAfter != 50*time.Microsecond {
		t.Fatalf("50 µs after an admission: allowed=%v retry after %v, want refused, retry after 50µs", d.Allowed, d.RetryAfter)
	}
}

// TestLaggingClockDecidesAsAnExactClockAtItsTimes plays the conformance
// suite's random scenarios (every algorithm, several limits a call,
// shadows, plan changes, leases given back, time standing still, jumping
// and stepping back) on a store deciding at a time that lags the exact one
// by a random amount (none, microseconds, milliseconds, up to seconds), as
// the ticker's does. Each call must be decided at the lagging time or, when
// a check refuses it there, at the exact time (so every refusal is decided
// at the exact time), and its
// Statuses must be those of a store reading an exact clock set to that
// time: the lag changes when a call is decided, never how. This also
// checks the states that a refused call reads again before deciding at
// the exact time.
func TestLaggingClockDecidesAsAnExactClockAtItsTimes(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		sc := conformance.Random(seed)
		t.Run(sc.Name, func(t *testing.T) { playLagging(t, sc, seed) })
	}
}

func playLagging(t *testing.T, sc conformance.Scenario, seed uint64) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 0x1a9))
	var exact, at fakeTime
	exact.us.Store(sluice.MicrosSinceEpoch(sc.Start))
	want := New(WithSweepInterval(0), WithClock(func() time.Time { return sluice.TimeFromMicros(at.read()) }))
	got := New(WithSweepInterval(0))
	defer want.Close()
	defer got.Close()
	c := lagging(got, &exact)
	calls := make([][]sluice.Check, len(sc.Steps))
	leases := make([][2][]int64, len(sc.Steps)) // want's, got's
	refusals, early := 0, 0
	for n, step := range sc.Steps {
		exact.us.Add(int64(step.Advance / time.Microsecond))
		behind := []int64{0, r.Int64N(1000), r.Int64N(100_000), r.Int64N(10_000_000)}[r.IntN(4)]
		c.set(exact.read() - behind)
		at.us.Store(exact.read())
		for _, k := range step.Release {
			if err := want.Release(ctx, calls[k], leases[k][0]); err != nil {
				t.Fatal(err)
			}
			if err := got.Release(ctx, calls[k], leases[k][1]); err != nil {
				t.Fatal(err)
			}
		}
		if len(step.Checks) == 0 {
			continue
		}
		calls[n] = step.Checks
		g := make([]sluice.Status, len(step.Checks))
		now, err := got.apply(step.Checks, g)
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		refused := !allAllowed(g)
		switch {
		case refused && now != exact.read():
			t.Fatalf("step %d: a refused call was decided at %d µs, not at the exact %d", n, now, exact.read())
		case now != exact.read() && now != exact.read()-behind:
			t.Fatalf("step %d: a call was decided at %d µs, neither the exact %d nor the lagging %d", n, now, exact.read(), exact.read()-behind)
		}
		if refused {
			refusals++
		} else if behind > 0 && now != exact.read() {
			early++
		}
		at.us.Store(now)
		w := make([]sluice.Status, len(step.Checks))
		if err := want.Apply(ctx, step.Checks, w); err != nil {
			t.Fatal(err)
		}
		for i := range w {
			leases[n][0] = append(leases[n][0], w[i].Lease)
			leases[n][1] = append(leases[n][1], g[i].Lease)
			if g[i] != w[i] {
				t.Fatalf("step %d check %d (%s) at %d µs (%d behind the exact time):\n got  %+v\n want %+v (an exact clock at that time)",
					n, i, step.Checks[i].Limit, now, exact.read()-now, g[i], w[i])
			}
		}
	}
	if refusals == 0 || early == 0 {
		t.Logf("%d refused calls, %d admitted at a lagging time", refusals, early)
	}
}

// allAllowed reports whether every check of a call fits (shadow ones too:
// the store decides again at the exact time when any refuses).
func allAllowed(out []sluice.Status) bool {
	for i := range out {
		if !out[i].Allowed {
			return false
		}
	}
	return true
}

// TestClockTickerStartsStopsWhenIdleAndOnClose runs the default clock's
// ticker for real: a decision starts it, it keeps the decisions' time
// within a few resolutions of the exact time, it stops after idleTicks
// ticks without a decision, the next decision starts it again, and Close
// stops it for good (later decisions read the exact time).
func TestClockTickerStartsStopsWhenIdleAndOnClose(t *testing.T) {
	const res = time.Millisecond
	s := New(WithSweepInterval(0), WithClockResolution(res))
	c := s.clock
	if c.cached.Load() != 0 {
		t.Fatal("the ticker runs before any decision")
	}
	lim := sluice.NewLimiter(s)
	decide := func() {
		if _, err := allow(lim, context.Background(), sluice.Check{Key: "k", Limit: sluice.PerSecond(1e6), Cost: 1}); err != nil {
			t.Fatal(err)
		}
	}
	decide()
	if c.cached.Load() == 0 {
		t.Fatal("a decision did not start the ticker")
	}
	// While decisions come, the ticker keeps the time fresh.
	var worst int64
	for range 200 {
		decide()
		time.Sleep(res / 4)
		if d := c.exact() - c.now(); d > worst {
			worst = d
		}
	}
	if c.cached.Load() == 0 {
		t.Fatal("the ticker stopped while decisions came")
	}
	if worst > int64(50*res/time.Microsecond) {
		t.Errorf("the decisions' time lagged the exact time by up to %d µs with a %v resolution", worst, res)
	}
	if lag := s.Stats().ClockMaxLag; lag <= 0 || lag > 5*time.Second {
		t.Errorf("Stats.ClockMaxLag = %v after 200 decisions over %v ticks", lag, res)
	}
	waitFor(t, "the ticker to stop when idle", func() bool { return c.cached.Load() == 0 })
	decide()
	if c.cached.Load() == 0 {
		t.Fatal("a decision after the idle stop did not start the ticker again")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Close to stop the ticker", func() bool { return c.cached.Load() == 0 })
	decide()
	if c.cached.Load() != 0 {
		t.Fatal("a decision after Close started the ticker")
	}
	before := c.exact()
	if now := c.now(); now < before {
		t.Fatalf("after Close the time %d is behind an exact read before it (%d)", now, before)
	}
}

// TestClockCountsLateTicks: a tick more than two resolutions after the
// previous one is late, and the longest gap is the clock's largest lag.
func TestClockCountsLateTicks(t *testing.T) {
	s := New(WithSweepInterval(0), WithClockResolution(time.Millisecond))
	defer s.Close()
	c := s.clock
	for _, gap := range []int64{1000, 1900, 2000, 2001, 5000, 1200} {
		c.observe(10_000, 10_000+gap)
	}
	st := s.Stats()
	if st.ClockLateTicks != 2 || st.ClockMaxLag != 5*time.Millisecond {
		t.Fatalf("late ticks %d, max lag %v; want 2 and 5ms", st.ClockLateTicks, st.ClockMaxLag)
	}
}

// TestExactResolutionStartsNoTicker: WithClockResolution(0) and WithClock
// read the clock for every decision and run no goroutine.
func TestExactResolutionStartsNoTicker(t *testing.T) {
	for name, s := range map[string]*Store{
		"resolution 0": New(WithSweepInterval(0), WithClockResolution(0)),
		"WithClock":    New(WithSweepInterval(0), WithClock(time.Now)),
	} {
		if _, err := allow(sluice.NewLimiter(s), context.Background(), sluice.Check{Key: "k", Limit: sluice.PerSecond(10), Cost: 1}); err != nil {
			t.Fatal(err)
		}
		if s.clock.res != 0 || s.clock.cached.Load() != 0 {
			t.Errorf("%s: the clock lags or started a ticker", name)
		}
		s.Close()
	}
}

// TestOnlyLimitsThatTolerateTheLagDecideAtIt: at a 1 ms resolution, a
// limit is decided at the lagging time only if it refills at most one unit
// or 1/256 of its burst in a millisecond; any other check of a call makes
// the whole call read the exact time.
func TestOnlyLimitsThatTolerateTheLagDecideAtIt(t *testing.T) {
	s := New(WithSweepInterval(0))
	defer s.Close()
	var exact fakeTime
	start := sluice.MicrosSinceEpoch(conformance.DefaultStart)
	exact.us.Store(start + 5000)
	c := lagging(s, &exact)
	c.res = time.Millisecond
	c.set(start)
	for _, tc := range []struct {
		limit sluice.Limit
		lag   bool
	}{
		{sluice.GCRA(10_000, time.Second), true},                  // 10 units a ms, burst 10,000
		{sluice.GCRA(10_000, time.Second).WithBurst(2560), true},  // 10 units a ms: 1/256 of its burst
		{sluice.GCRA(10_000, time.Second).WithBurst(2559), false}, // a little more
		{sluice.GCRA(100_000, time.Second).WithBurst(100), false}, // its whole burst in a ms
		{sluice.PerSecond(1000).WithBurst(1), true},               // one unit a ms
		{sluice.PerSecond(2000).WithBurst(1), false},
		{sluice.PerSecond(64_000), true},              // 64 units a ms: 1/1000 of its burst
		{sluice.FixedWindow(100, time.Second), false}, // a window's start gives its quota back at once
		{sluice.FixedWindow(100, 50*time.Millisecond), false},
		{sluice.SlidingCounter(10, time.Minute), false},
		{sluice.SlidingLog(10, time.Minute), false},
		{sluice.Concurrency(10, 30*time.Second), true},
	} {
		now, err := s.apply([]sluice.Check{{Key: "k", Limit: tc.limit, Cost: 0}}, make([]sluice.Status, 1))
		if err != nil {
			t.Fatal(err)
		}
		if lagged := now == start; lagged != tc.lag {
			t.Errorf("%s: decided at the lagging time: %v, want %v", tc.limit, lagged, tc.lag)
		}
	}
	// One limit that does not tolerate the lag makes a call exact.
	checks := []sluice.Check{
		{Key: "k", Limit: sluice.PerMinute(10), Cost: 1},
		{Key: "k", Limit: sluice.PerSecond(2000).WithBurst(1).Named("fast"), Cost: 1},
	}
	now, err := s.apply(checks, make([]sluice.Status, 2))
	if err != nil {
		t.Fatal(err)
	}
	if now != exact.read() {
		t.Errorf("a call with a fast limit was decided at %d, not the exact %d", now, exact.read())
	}
}

// TestClockResolutionHasAFloor: a resolution below 100 µs is taken as
// 100 µs, so a typo cannot make the ticker spin.
func TestClockResolutionHasAFloor(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		time.Nanosecond:        minResolution,
		99 * time.Microsecond:  minResolution,
		time.Millisecond:       time.Millisecond,
		-time.Second:           0,
		250 * time.Microsecond: 250 * time.Microsecond,
	} {
		s := New(WithSweepInterval(0), WithClockResolution(d))
		if s.clock.res != want {
			t.Errorf("WithClockResolution(%v): the ticker's period is %v, want %v", d, s.clock.res, want)
		}
		s.Close()
	}
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLaggingClockAdmitsExactlyTheBurstUnderContention: 8 goroutines spend
// a per-hour limit of 1,000 on one key through the default, ticking clock,
// half of their calls alone (decided at the ticker's time) and half beside
// a limit too fast to tolerate the lag (decided at the exact time), while
// refusals are decided again at the exact time. Over the second or so the
// test runs the limit refills a fraction of a unit, so exactly its burst
// must be admitted: mixing lagging and exact times never admits more.
func TestLaggingClockAdmitsExactlyTheBurstUnderContention(t *testing.T) {
	s := New(WithSweepInterval(0))
	defer s.Close()
	lim := sluice.NewLimiter(s)
	hour := sluice.PerHour(1000).Named("hour")
	fast := sluice.PerSecond(1_000_000).WithBurst(1000).Named("fast") // 1,000 units a ms: never lags
	var admitted atomic.Int64
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			alone := []sluice.Check{{Key: "k", Limit: hour, Cost: 1}}
			paired := []sluice.Check{{Key: "k", Limit: hour, Cost: 1}, {Key: "k", Limit: fast, Cost: 1}}
			var d sluice.Decision
			for i := range 5000 {
				checks := alone
				if (i+g)%2 == 0 {
					checks = paired
				}
				if err := lim.Allow(context.Background(), checks, &d); err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	if got := admitted.Load(); got != 1000 {
		t.Fatalf("admitted %d calls against a burst of 1,000", got)
	}
	if s.clock.cached.Load() == 0 {
		t.Error("the ticker never ran: the test did not exercise the lagging time")
	}
}

// allow decides checks with lim into a Decision of its own.
func allow(lim *sluice.Limiter, ctx context.Context, checks ...sluice.Check) (sluice.Decision, error) {
	var d sluice.Decision
	err := lim.Allow(ctx, checks, &d)
	return d, err
}
