package memory_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a settable clock safe for concurrent reads.
type fakeClock struct{ us atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.us.Store(sluice.MicrosSinceEpoch(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)))
	return c
}
func (c *fakeClock) Now() time.Time          { return sluice.TimeFromMicros(c.us.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.us.Add(int64(d / time.Microsecond)) }

func newStore(t *testing.T, opts ...memory.Option) (*memory.Store, *sluice.Limiter, *fakeClock) {
	t.Helper()
	clock := newClock()
	s := memory.New(append([]memory.Option{memory.WithClock(clock.Now)}, opts...)...)
	t.Cleanup(func() { s.Close() })
	return s, sluice.NewLimiter(s), clock
}

func TestConcurrentChecksAdmitExactlyThePromise(t *testing.T) {
	// 8 goroutines × 10,000 checks on one key, time frozen: every algorithm
	// must admit exactly its capacity, no more (lost updates) and no less.
	const goroutines, perG = 8, 10_000
	limits := []sluice.Limit{
		sluice.FixedWindow(1234, time.Minute),
		sluice.SlidingLog(1234, time.Minute),
		sluice.SlidingCounter(1234, time.Minute),
		sluice.TokenBucket(100, time.Second).WithBurst(1234),
		sluice.LeakyBucket(100, time.Second).WithBurst(1234),
		sluice.GCRA(100, time.Second).WithBurst(1234),
		sluice.LeakyBucket(1000, time.Second).WithBurst(1000).WithMaxWait(234 * time.Millisecond),
	}
	for _, l := range limits {
		t.Run(l.String(), func(t *testing.T) {
			_, lim, _ := newStore(t)
			var admitted atomic.Int64
			var wg sync.WaitGroup
			for range goroutines {
				wg.Go(func() {
					var d sluice.Decision
					checks := []sluice.Check{{Key: "hot", Limit: l, Cost: 1}}
					for range perG {
						if err := lim.Allow(context.Background(), checks, &d); err != nil {
							t.Error(err)
							return
						}
						if d.Allowed {
							admitted.Add(1)
						}
					}
				})
			}
			wg.Wait()
			if got := admitted.Load(); got != 1234 {
				t.Errorf("admitted %d, want exactly 1234", got)
			}
		})
	}
}

func TestMultiLimitIsAllOrNothing(t *testing.T) {
	_, lim, clock := newStore(t)
	ctx := context.Background()
	perSecond := sluice.FixedWindow(10, time.Second).Named("per-second")
	perMinute := sluice.FixedWindow(100, time.Minute).Named("per-minute")
	perDay := sluice.FixedWindow(25, 24*time.Hour).Named("per-day")
	checks := func(cost int64) []sluice.Check {
		return []sluice.Check{
			{Key: "user-1", Limit: perSecond, Cost: cost},
			{Key: "user-1", Limit: perMinute, Cost: cost},
			{Key: "user-1", Limit: perDay, Cost: cost},
		}
	}
	admitted := 0
	for range 30 { // 3 per second for 10 seconds: the day limit (25) refuses first
		for range 3 {
			d, err := allow(lim, ctx, checks(1)...)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				admitted++
			}
		}
		clock.Advance(time.Second)
	}
	if admitted != 25 {
		t.Fatalf("admitted %d, want 25 (the per-day limit)", admitted)
	}
	d, err := allow(lim, ctx, checks(0)...)
	if err != nil {
		t.Fatal(err)
	}
	// Per-second is fresh again; per-minute must hold only the 25 admitted:
	// the 65 refused by per-day consumed nothing anywhere.
	if got := d.Statuses[1].Remaining; got != 75 {
		t.Errorf("per-minute remaining %d, want 75: refused checks consumed quota", got)
	}
	if got := d.Statuses[0].Remaining; got != 10 {
		t.Errorf("per-second remaining %d, want 10", got)
	}
	d, err = allow(lim, ctx, checks(1)...)
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || len(d.Violated) != 1 || d.Violated[0] != "per-day" || d.Limit.Name() != "per-day" {
		t.Fatalf("want refused by per-day only, got allowed=%v violated=%v deciding=%s", d.Allowed, d.Violated, d.Limit.Name())
	}
	if d.Statuses[1].Remaining != 75 {
		t.Errorf("per-minute after a refused call: %d, want 75 (a peek)", d.Statuses[1].Remaining)
	}
}

func TestRefusalNamesEveryViolatedLimit(t *testing.T) {
	_, lim, _ := newStore(t)
	ctx := context.Background()
	a := sluice.FixedWindow(1, time.Minute).Named("a")
	b := sluice.FixedWindow(1, time.Hour).Named("b")
	c := sluice.FixedWindow(5, time.Minute).Named("c")
	batch := []sluice.Check{{Key: "k", Limit: a, Cost: 1}, {Key: "k", Limit: b, Cost: 1}, {Key: "k", Limit: c, Cost: 1}}
	if d, err := allow(lim, ctx, batch...); err != nil || !d.Allowed {
		t.Fatalf("first call: %+v %v", d, err)
	}
	d, err := allow(lim, ctx, batch...)
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || fmt.Sprint(d.Violated) != "[a b]" {
		t.Fatalf("violated = %v, want [a b]", d.Violated)
	}
	// The call may pass once both violated limits admit it: the hour.
	if d.Limit.Name() != "b" || d.RetryAfter > time.Hour || d.RetryAfter <= time.Minute {
		t.Errorf("deciding %s retry %v, want b within the hour", d.Limit.Name(), d.RetryAfter)
	}
	if d.Statuses[2].Remaining != 4 {
		t.Errorf("c remaining %d, want 4 (nothing consumed)", d.Statuses[2].Remaining)
	}
}

func TestShadowLimitReportsButNeverRefuses(t *testing.T) {
	_, lim, _ := newStore(t)
	ctx := context.Background()
	enforce := sluice.FixedWindow(10, time.Minute).Named("enforced")
	shadow := sluice.FixedWindow(2, time.Minute).Named("trial").WithShadow(true)
	var wouldRefuse int
	for range 5 {
		d, err := allow(lim, ctx, sluice.Check{Key: "k", Limit: enforce, Cost: 1}, sluice.Check{Key: "k", Limit: shadow, Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			t.Fatalf("a shadow limit refused: %+v", d)
		}
		if !d.Statuses[1].Allowed {
			wouldRefuse++
		}
	}
	if wouldRefuse != 3 {
		t.Errorf("shadow would have refused %d, want 3", wouldRefuse)
	}
	d, _ := allow(lim, ctx, sluice.Check{Key: "k", Limit: enforce})
	if d.Remaining != 5 {
		t.Errorf("enforced remaining %d, want 5", d.Remaining)
	}
}

func TestInvalidChecksAreErrorsNotDecisions(t *testing.T) {
	_, lim, _ := newStore(t)
	ctx := context.Background()
	ok := sluice.PerMinute(10)
	cases := []struct {
		name   string
		checks []sluice.Check
	}{
		{"no checks", nil},
		{"empty key", []sluice.Check{{Key: "", Limit: ok, Cost: 1}}},
		{"negative cost", []sluice.Check{{Key: "k", Limit: ok, Cost: -1}}},
		{"zero limit", []sluice.Check{{Key: "k", Cost: 1}}},
		{"invalid limit", []sluice.Check{{Key: "k", Limit: sluice.PerMinute(0), Cost: 1}}},
		{"same key and limit twice", []sluice.Check{{Key: "k", Limit: ok, Cost: 1}, {Key: "k", Limit: ok, Cost: 1}}},
		{"key over 1 KiB", []sluice.Check{{Key: string(make([]byte, 1025)), Limit: ok, Cost: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := allow(lim, ctx, c.checks...); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// Called directly, not through a Limiter, the store reports what it cannot
// decide as an error and changes nothing: on the path of a known key and
// on that of a new one.
func TestApplyRefusesWhatCannotBeDecided(t *testing.T) {
	store, _, _ := newStore(t)
	ctx := context.Background()
	ok := sluice.PerMinute(10)
	apply := func(checks ...sluice.Check) ([]sluice.Status, error) {
		out := make([]sluice.Status, len(checks))
		return out, store.Apply(ctx, checks, out)
	}
	if _, err := apply(sluice.Check{Key: "known", Limit: ok, Cost: 4}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		checks []sluice.Check
	}{
		{"negative cost, known key", []sluice.Check{{Key: "known", Limit: ok, Cost: 1}, {Key: "known", Limit: ok.Named("b"), Cost: -1}}},
		{"negative cost alone, known key", []sluice.Check{{Key: "known", Limit: ok, Cost: -1}}},
		{"negative cost, new key", []sluice.Check{{Key: "new", Limit: ok, Cost: -1}}},
		{"zero limit", []sluice.Check{{Key: "known", Limit: ok, Cost: 1}, {Key: "known", Cost: 1}}},
		{"invalid limit", []sluice.Check{{Key: "new", Limit: sluice.PerMinute(0), Cost: 1}}},
	} {
		if _, err := apply(tc.checks...); !errors.Is(err, sluice.ErrInvalidCheck) {
			t.Errorf("%s: %v, want ErrInvalidCheck", tc.name, err)
		}
	}
	for _, line := range storetest.Mismatched(ctx, store, []sluice.Check{{Key: "known", Limit: ok, Cost: 1}, {Key: "new", Limit: ok, Cost: 1}}) {
		t.Error(line)
	}
	out, err := apply(sluice.Check{Key: "known", Limit: ok}, sluice.Check{Key: "new", Limit: ok})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Remaining != 6 || out[1].Remaining != 10 {
		t.Errorf("after the refused calls: %d and %d remaining, want 6 and 10 (nothing spent)", out[0].Remaining, out[1].Remaining)
	}
}

// The store never waits on I/O and does not consult its context: a call
// whose context is done is decided, and counted, like any other; so is a
// lease given back.
func TestDoneContextIsDecided(t *testing.T) {
	_, lim, _ := newStore(t)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, l := range []sluice.Limit{sluice.PerMinute(2), sluice.SlidingLog(2, time.Minute)} {
		for i, want := range []bool{true, true, false} {
			d, err := allow(lim, done, sluice.Check{Key: "k", Limit: l, Cost: 1})
			if err != nil || d.Allowed != want || want && d.Remaining != int64(1-i) {
				t.Fatalf("%s, call %d with a done context: %v (remaining %d), %v; want allowed %v", l, i+1, d.Allowed, d.Remaining, err, want)
			}
		}
	}
	c := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}
	d, err := allow(lim, done, c...)
	if err != nil || !d.Allowed {
		t.Fatalf("concurrency with a done context: %v, %v", d.Allowed, err)
	}
	if err := lim.Release(done, c, &d); err != nil {
		t.Fatalf("Release with a done context: %v", err)
	}
	if d, err := allow(lim, done, c...); err != nil || !d.Allowed {
		t.Errorf("the lease released with a done context was kept: %v, %v", d.Allowed, err)
	}
}

func TestKeyBoundEvictsAndCounts(t *testing.T) {
	store, lim, clock := newStore(t, memory.WithMaxKeys(1000), memory.WithShards(4))
	ctx := context.Background()
	l := sluice.GCRA(10, time.Minute)
	for i := range 100_000 {
		if _, err := allow(lim, ctx, sluice.Check{Key: fmt.Sprintf("flood-%d", i), Limit: l, Cost: 1}); err != nil {
			t.Fatal(err)
		}
	}
	st := store.Stats()
	if st.Keys > 1000 {
		t.Errorf("holds %d keys, bound is 1000", st.Keys)
	}
	if st.Evictions+st.Expirations != 100_000-int64(st.Keys) {
		t.Errorf("evictions %d + expirations %d != keys dropped %d", st.Evictions, st.Expirations, 100_000-st.Keys)
	}
	// After the window every state has returned to full quota: a sweep
	// forgets them all.
	clock.Advance(time.Minute)
	if n := store.Sweep(); n != st.Keys {
		t.Errorf("sweep forgot %d, want %d", n, st.Keys)
	}
	if got := store.Stats().Keys; got != 0 {
		t.Errorf("%d keys left after the sweep", got)
	}
}

func TestFullStoreReclaimsExpiredBeforeEvicting(t *testing.T) {
	store, lim, clock := newStore(t, memory.WithMaxKeys(100), memory.WithShards(1))
	ctx := context.Background()
	l := sluice.FixedWindow(5, time.Second)
	for i := range 100 {
		allow(lim, ctx, sluice.Check{Key: fmt.Sprintf("old-%d", i), Limit: l, Cost: 1})
	}
	clock.Advance(time.Second) // every old state has expired
	for i := range 100 {
		allow(lim, ctx, sluice.Check{Key: fmt.Sprintf("new-%d", i), Limit: l, Cost: 1})
	}
	st := store.Stats()
	if st.Evictions != 0 || st.Expirations != 100 || st.Keys != 100 {
		t.Errorf("stats %+v, want 100 expirations and no eviction", st)
	}
}

func TestExistingKeyDecisionAllocatesNothing(t *testing.T) {
	for _, l := range []sluice.Limit{sluice.GCRA(1e6, time.Second), sluice.TokenBucket(1e6, time.Second),
		sluice.FixedWindow(1e9, time.Minute), sluice.SlidingCounter(1e9, time.Minute)} {
		_, lim, _ := newStore(t)
		ctx := context.Background()
		var d sluice.Decision
		checks := []sluice.Check{{Key: "k", Limit: l, Cost: 1}}
		lim.Allow(ctx, checks, &d)
		if n := testing.AllocsPerRun(1000, func() { lim.Allow(ctx, checks, &d) }); n != 0 {
			t.Errorf("%v: %v allocations per decision on an existing key", l.Algorithm(), n)
		}
		multi := []sluice.Check{{Key: "k", Limit: l, Cost: 1}, {Key: "global", Limit: l.Named("global"), Cost: 1}}
		lim.Allow(ctx, multi, &d)
		if n := testing.AllocsPerRun(1000, func() { lim.Allow(ctx, multi, &d) }); n != 0 {
			t.Errorf("%v: %v allocations per two-check decision", l.Algorithm(), n)
		}
	}
}

func TestCloseStopsTheSweeper(t *testing.T) {
	s := memory.New(memory.WithSweepInterval(time.Millisecond))
	time.Sleep(5 * time.Millisecond)
	s.Close()
	s.Close() // idempotent
	// goleak (TestMain) fails the package if the goroutine survived.
}

func TestManyChecksInOneCall(t *testing.T) {
	_, lim, _ := newStore(t)
	var checks []sluice.Check
	for i := range sluice.MaxChecks {
		checks = append(checks, sluice.Check{Key: fmt.Sprintf("k%d", i%7), Limit: sluice.PerSecond(5).Named(fmt.Sprintf("l%d", i)), Cost: 1})
	}
	for i := range 6 {
		d, err := allow(lim, context.Background(), checks...)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != (i < 5) || len(d.Statuses) != sluice.MaxChecks {
			t.Fatalf("call %d: allowed=%v", i, d.Allowed)
		}
		if i == 5 && len(d.Violated) != sluice.MaxChecks {
			t.Errorf("violated %d limits, want all %d", len(d.Violated), sluice.MaxChecks)
		}
	}
}

// A key whose states the sweep has all forgotten is dropped, and a key that
// comes back after that is held again: counted in Stats and decided on its
// own state.
func TestKeysComeBackAfterTheSweepDropsThem(t *testing.T) {
	s, lim, clock := newStore(t, memory.WithSweepInterval(0), memory.WithShards(1))
	perSecond, perMinute := sluice.PerSecond(2), sluice.PerMinute(5)
	ctx := context.Background()
	both := []sluice.Check{{Key: "k", Limit: perSecond, Cost: 1}, {Key: "k", Limit: perMinute, Cost: 1}}
	if _, err := allow(lim, ctx, both...); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	if n := s.Sweep(); n != 2 {
		t.Fatalf("Sweep forgot %d states, want 2", n)
	}
	for i := 1; i <= 3; i++ {
		d, err := allow(lim, ctx, both...)
		if err != nil {
			t.Fatal(err)
		}
		if want := i <= 2; d.Allowed != want {
			t.Fatalf("call %d after the sweep: allowed %v, want %v (per-second state lost?)", i, d.Allowed, want)
		}
	}
	if got := s.Stats().Keys; got != 2 {
		t.Errorf("Stats().Keys = %d, want 2", got)
	}
	clock.Advance(2 * time.Minute)
	if n := s.Sweep(); n != 2 {
		t.Errorf("the second Sweep forgot %d states, want 2: states kept where the sweep cannot see them", n)
	}
}

// A key with more limits than its entry holds inline (ten, where it has six
// slots) still decides every one exactly, alone and together, from several
// goroutines: the states kept beside the array are decided under the
// shard's mutex.
func TestMoreLimitsThanAnEntryHoldsDecideExactly(t *testing.T) {
	_, lim, _ := newStore(t, memory.WithShards(1))
	const names, burst = 10, 50
	limits := make([]sluice.Limit, names)
	for i := range limits {
		limits[i] = sluice.GCRA(burst, time.Hour).Named(fmt.Sprintf("l%d", i))
	}
	var admitted [names]atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			var d sluice.Decision
			for n := range 3 * burst {
				i := (g + n) % names
				checks := []sluice.Check{{Key: "k", Limit: limits[i], Cost: 1}}
				if n%3 == 0 { // with its neighbour, all or nothing
					checks = append(checks, sluice.Check{Key: "k", Limit: limits[(i+1)%names], Cost: 1})
				}
				if err := lim.Allow(ctx, checks, &d); err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					for _, c := range checks {
						admitted[slices.Index(limits, c.Limit)].Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	ctx := context.Background()
	for i, l := range limits {
		// Spend what is left one by one: every limit ends at exactly its burst.
		for {
			d, err := allow(lim, ctx, sluice.Check{Key: "k", Limit: l, Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !d.Allowed {
				break
			}
			admitted[i].Add(1)
		}
		if got := admitted[i].Load(); got != burst {
			t.Errorf("%s admitted %d, want exactly %d", l.Name(), got, burst)
		}
	}
}

// allow decides checks with lim into a Decision of its own.
func allow(lim *sluice.Limiter, ctx context.Context, checks ...sluice.Check) (sluice.Decision, error) {
	var d sluice.Decision
	err := lim.Allow(ctx, checks, &d)
	return d, err
}

// The zero Store holds nothing: its calls are errors, its upkeep does
// nothing, and none panics.
func TestZeroStoreHoldsNothing(t *testing.T) {
	var s memory.Store
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.PerMinute(1), Cost: 1}}
	if err := s.Apply(ctx, checks, make([]sluice.Status, 1)); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Apply: %v, want ErrStoreUnavailable", err)
	}
	if err := s.Release(ctx, checks, []int64{1}); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Release: %v, want ErrStoreUnavailable", err)
	}
	if err := s.Refund(ctx, checks, []int64{1}); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Refund: %v, want ErrStoreUnavailable", err)
	}
	if n := s.Reset("k", []sluice.Limit{sluice.PerMinute(1)}); n != 0 {
		t.Errorf("Reset: %d", n)
	}
	if n := s.Sweep(); n != 0 {
		t.Errorf("Sweep: %d", n)
	}
	if st := s.Stats(); st != (memory.Stats{}) {
		t.Errorf("Stats: %+v", st)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
