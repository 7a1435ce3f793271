package overlimit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// rigT is what the rig needs of *testing.T and *rapid.T.
type rigT interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// cacheRig is a Cache over a counting store backed by a memory
// store, all on one manual clock.
type cacheRig struct {
	clk     *storetest.Clock
	store   *storetest.Flaky
	cache   *overlimit.Cache
	limiter *sluice.Limiter
}

func newCacheRig(t rigT, opts overlimit.Options) *cacheRig {
	r := &cacheRig{clk: storetest.NewClock()}
	mem := memory.New(memory.WithClock(r.clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	r.store = &storetest.Flaky{Next: mem}
	opts.Clock = r.clk.Now
	r.cache = overlimit.New(r.store, opts)
	r.limiter = sluice.NewLimiter(r.cache)
	return r
}

// allow decides checks and reports whether the store was asked.
func (r *cacheRig) allow(t rigT, checks ...sluice.Check) (d sluice.Decision, asked bool) {
	t.Helper()
	before := r.store.Calls.Load()
	d, err := allow(r.limiter, context.Background(), checks...)
	if err != nil {
		t.Fatalf("Allow: %v", err)
	}
	return d, r.store.Calls.Load() > before
}

// expect is one call of a scenario and what must come of it.
type expect struct {
	checks  []sluice.Check
	advance time.Duration // before the call
	allowed bool
	asked   bool          // whether the store was asked
	retry   time.Duration // the decision's RetryAfter, when refused; -1: don't care
}

func one(l sluice.Limit, cost int64) []sluice.Check {
	return []sluice.Check{{Key: "k", Limit: l, Cost: cost}}
}

func TestOverLimitCache(t *testing.T) {
	rps := sluice.PerSecond(1).Named("rps")
	bucket := sluice.TokenBucket(10, time.Second) // one token per 100ms
	tests := []struct {
		name  string
		calls []expect
		saved int64
	}{
		{
			name: "a refused client is refused again without a round trip, with the time left",
			calls: []expect{
				{checks: one(rps, 1), allowed: true, asked: true},
				{checks: one(rps, 1), asked: true, retry: time.Second},
				{checks: one(rps, 1), advance: 400 * time.Millisecond, retry: 600 * time.Millisecond},
				{checks: one(rps, 1), advance: 599 * time.Millisecond, retry: time.Millisecond},
			},
			saved: 2,
		},
		{
			name: "the client is let through to the store as soon as the store would admit it",
			calls: []expect{
				{checks: one(rps, 1), allowed: true, asked: true},
				{checks: one(rps, 1), asked: true, retry: time.Second},
				{checks: one(rps, 1), advance: time.Second, allowed: true, asked: true},
			},
		},
		{
			name: "a larger cost is refused locally, a smaller one goes to the store",
			calls: []expect{
				{checks: one(bucket, 8), allowed: true, asked: true},                 // 2 left
				{checks: one(bucket, 5), asked: true, retry: 300 * time.Millisecond}, // remembered: ≥5
				{checks: one(bucket, 6), retry: 400 * time.Millisecond},              // ≥5: local, 1 more to refill
				{checks: one(bucket, 5), retry: 300 * time.Millisecond},              // ≥5: local
				{checks: one(bucket, 3), asked: true, retry: 100 * time.Millisecond}, // <5: store; now ≥3
				{checks: one(bucket, 5), retry: 300 * time.Millisecond},              // ≥3: local
				{checks: one(bucket, 2), allowed: true, asked: true},                 // <3: store
				{checks: one(bucket, 2), asked: true, retry: 200 * time.Millisecond}, // 0 left
			},
			saved: 3,
		},
		{
			name: "an admission below a remembered cost lengthens the wait: the store states it",
			calls: []expect{
				{checks: one(bucket, 8), allowed: true, asked: true},                 // 2 left
				{checks: one(bucket, 5), asked: true, retry: 300 * time.Millisecond}, // remembered: ≥5
				{checks: one(bucket, 1), allowed: true, asked: true},                 // 1 left
				{checks: one(bucket, 5), asked: true, retry: 400 * time.Millisecond}, // not 300ms
				{checks: one(bucket, 5), retry: 400 * time.Millisecond},
			},
			saved: 1,
		},
		{
			name: "peeks always go to the store",
			calls: []expect{
				{checks: one(rps, 1), allowed: true, asked: true},
				{checks: one(rps, 1), asked: true, retry: time.Second},
				{checks: one(rps, 0), allowed: true, asked: true},
				{checks: []sluice.Check{{Key: "k", Limit: rps, Cost: 1}, {Key: "k", Limit: bucket, Cost: 0}}, asked: true, retry: -1},
			},
		},
		{
			name: "a shadow limit's refusal is not remembered",
			calls: []expect{
				{checks: one(rps.WithShadow(true), 1), allowed: true, asked: true},
				{checks: one(rps.WithShadow(true), 1), allowed: true, asked: true},
				{checks: one(rps.WithShadow(true), 1), allowed: true, asked: true},
			},
		},
		{
			name: "a cost above the burst (retry never) is not remembered",
			calls: []expect{
				{checks: one(rps, 2), asked: true, retry: sluice.Never},
				{checks: one(rps, 2), asked: true, retry: sluice.Never},
			},
		},
		{
			name: "a changed limit of the same name is not refused by the old limit's denial",
			calls: []expect{
				{checks: one(rps, 1), allowed: true, asked: true},
				{checks: one(rps, 1), asked: true, retry: time.Second},
				{checks: one(sluice.FixedWindow(5, time.Second).Named("rps"), 1), allowed: true, asked: true},
				{checks: one(rps, 1), asked: true, retry: -1}, // the old denial was dropped
			},
		},
		{
			name: "a refused batch is refused as a whole and names the remembered limit",
			calls: []expect{
				{checks: []sluice.Check{{Key: "k", Limit: rps, Cost: 1}, {Key: "k", Limit: sluice.PerMinute(100), Cost: 1}}, allowed: true, asked: true},
				{checks: []sluice.Check{{Key: "k", Limit: rps, Cost: 1}, {Key: "k", Limit: sluice.PerMinute(100), Cost: 1}}, asked: true, retry: time.Second},
				{checks: []sluice.Check{{Key: "k", Limit: rps, Cost: 1}, {Key: "k", Limit: sluice.PerMinute(100), Cost: 1}}, advance: 500 * time.Millisecond, retry: 500 * time.Millisecond},
				{checks: []sluice.Check{{Key: "other", Limit: rps, Cost: 1}, {Key: "k", Limit: rps, Cost: 1}}, retry: 500 * time.Millisecond},
				{checks: one(sluice.PerMinute(100), 0), allowed: true, asked: true}, // nothing was charged to the minute
			},
			saved: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCacheRig(t, overlimit.Options{})
			for i, c := range tt.calls {
				r.clk.Advance(c.advance)
				d, asked := r.allow(t, c.checks...)
				if d.Allowed != c.allowed || asked != c.asked {
					t.Fatalf("call %d: allowed %v, store asked %v; want %v, %v", i+1, d.Allowed, asked, c.allowed, c.asked)
				}
				if !d.Allowed && c.retry >= 0 && d.RetryAfter != c.retry {
					t.Fatalf("call %d: RetryAfter %v, want %v", i+1, d.RetryAfter, c.retry)
				}
			}
			if got := r.cache.Stats().RoundTripsSaved; got != tt.saved {
				t.Errorf("RoundTripsSaved %d, want %d", got, tt.saved)
			}
		})
	}
}

// The statuses of a call refused by the cache: the remembered check's are
// exact, and so are those the store gave of a check beside it (999 of the
// day left, full at midnight); a check the cache knows nothing of was not
// evaluated and says so: Undecided.
func TestOverLimitCacheRefusedBatchStatuses(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{})
	perSecond, perDay := sluice.PerSecond(1), sluice.FixedWindow(1000, 24*time.Hour)
	batch := []sluice.Check{{Key: "k", Limit: perSecond, Cost: 1}, {Key: "k", Limit: perDay, Cost: 1}}
	r.allow(t, batch...)
	stored, _ := r.allow(t, batch...)
	r.clk.Advance(250 * time.Millisecond)
	batch = append(batch, sluice.Check{Key: "k", Limit: sluice.PerMinute(60), Cost: 1})
	cached, asked := r.allow(t, batch...)
	if asked {
		t.Fatal("the store was asked")
	}
	if want := []string{"per-second"}; !slices.Equal(cached.Violated, want) || !slices.Equal(stored.Violated, want) {
		t.Errorf("violated: cached %v, stored %v, want %v", cached.Violated, stored.Violated, want)
	}
	if cached.Limit != perSecond || cached.Remaining != 0 || cached.RetryAfter != 750*time.Millisecond {
		t.Errorf("cached decision %+v, want per-second, 0 left, retry in 750ms", cached)
	}
	want := []sluice.Status{
		{RetryAfter: 750 * time.Millisecond, ResetAfter: 750 * time.Millisecond},
		{Allowed: true, Remaining: 999, ResetAfter: 12*time.Hour - 250*time.Millisecond}, // the clock is at noon
		{Allowed: true, Undecided: true},
	}
	if !slices.Equal(cached.Statuses, want) {
		t.Errorf("statuses %+v, want %+v", cached.Statuses, want)
	}
}

// The cache refuses until the store's deadline counted from when the
// refused call was sent, not from when its answer arrived: the store decided
// somewhere in between, so the cache never refuses past the store's
// deadline. The wait it states counts from when the answer arrived, never
// early (TestOverLimitCacheStatesAWaitThatIsNeverEarly), so here, where the
// store decided as the call was sent, a round trip late.
func TestOverLimitCacheMeasuresFromTheSentTime(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{})
	r.store.Clock, r.store.Cost = r.clk, 100*time.Millisecond // each round trip takes 100ms
	rps := sluice.PerSecond(1)
	r.allow(t, one(rps, 1)...) // admitted at 0, answered at 100ms
	d, _ := r.allow(t, one(rps, 1)...)
	if d.RetryAfter != 900*time.Millisecond { // decided at 100ms, answered at 200ms
		t.Fatalf("store's RetryAfter %v, want 900ms", d.RetryAfter)
	}
	d, asked := r.allow(t, one(rps, 1)...) // at 200ms
	if asked || d.RetryAfter != 900*time.Millisecond {
		t.Fatalf("cached at 200ms: asked %v, RetryAfter %v, want 900ms from the cache", asked, d.RetryAfter)
	}
	r.clk.Advance(800 * time.Millisecond) // 1s: the store admits again
	if d, asked := r.allow(t, one(rps, 1)...); !asked || !d.Allowed {
		t.Fatalf("at 1s: asked %v, allowed %v, want admitted by the store", asked, d.Allowed)
	}
}

// A client that waits the RetryAfter of a refusal the cache repeats is
// admitted (DESIGN: retrying at now+retry-after succeeds) even when the
// store decided at the end of the round trip: the wait stated counts from
// when the answer arrived.
func TestOverLimitCacheStatesAWaitThatIsNeverEarly(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{})
	r.store.During = func() { r.clk.Advance(100 * time.Millisecond) } // the store decides 100ms after the call is sent
	rps := sluice.PerSecond(1)
	r.allow(t, one(rps, 1)...) // sent at 0, admitted at 100ms
	d, _ := r.allow(t, one(rps, 1)...)
	if d.RetryAfter != 900*time.Millisecond { // sent at 100ms, decided at 200ms
		t.Fatalf("store's RetryAfter %v, want 900ms", d.RetryAfter)
	}
	d, asked := r.allow(t, one(rps, 1)...) // at 200ms
	if asked || d.RetryAfter != 900*time.Millisecond {
		t.Fatalf("cached at 200ms: asked %v, RetryAfter %v, want 900ms from the cache", asked, d.RetryAfter)
	}
	r.store.During = nil
	r.clk.Advance(d.RetryAfter)
	if d, _ := r.allow(t, one(rps, 1)...); !d.Allowed {
		t.Fatalf("retried after the wait stated: refused, RetryAfter %v", d.RetryAfter)
	}
}

func TestOverLimitCacheForgets(t *testing.T) {
	rps := sluice.PerSecond(1)
	refused := func(t *testing.T, r *cacheRig, key string) {
		t.Helper()
		check := sluice.Check{Key: key, Limit: rps, Cost: 1}
		r.allow(t, check)
		if d, _ := r.allow(t, check); d.Allowed {
			t.Fatal("not refused")
		}
	}
	cachedNow := func(t *testing.T, r *cacheRig, key string) bool {
		_, asked := r.allow(t, sluice.Check{Key: key, Limit: rps, Cost: 1})
		return !asked
	}
	tests := []struct {
		name     string
		forget   func(r *cacheRig)
		kept     []string // keys still remembered afterwards
		forgotOf []string
	}{
		{
			name:     "Invalidate forgets one key (a refund)",
			forget:   func(r *cacheRig) { r.cache.Invalidate("a") },
			kept:     []string{"b"},
			forgotOf: []string{"a"},
		},
		{
			name:     "Reset forgets every key (a configuration change)",
			forget:   func(r *cacheRig) { r.cache.Reset() },
			forgotOf: []string{"a", "b"},
		},
		{
			name: "an error other than a timeout forgets every key (the store may have restarted)",
			forget: func(r *cacheRig) {
				r.store.Fail(storetest.ErrRedisDown)
				allow(r.limiter, context.Background(), sluice.Check{Key: "c", Limit: rps, Cost: 1})
				r.store.Fail(nil)
			},
			forgotOf: []string{"a", "b"},
		},
		{
			name: "a timeout forgets nothing",
			forget: func(r *cacheRig) {
				r.store.Fail(fmt.Errorf("%w: %w", sluice.ErrStoreUnavailable, context.DeadlineExceeded))
				allow(r.limiter, context.Background(), sluice.Check{Key: "c", Limit: rps, Cost: 1})
				r.store.Fail(nil)
			},
			kept: []string{"a", "b"},
		},
		{
			name: "the store refusing invalid checks forgets nothing",
			forget: func(r *cacheRig) {
				r.store.Fail(fmt.Errorf("redis store: %w: key too long", sluice.ErrInvalidCheck))
				allow(r.limiter, context.Background(), sluice.Check{Key: "c", Limit: rps, Cost: 1})
				r.store.Fail(nil)
			},
			kept: []string{"a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCacheRig(t, overlimit.Options{})
			refused(t, r, "a")
			refused(t, r, "b")
			tt.forget(r)
			for _, k := range tt.kept {
				if !cachedNow(t, r, k) {
					t.Errorf("%s was forgotten", k)
				}
			}
			for _, k := range tt.forgotOf {
				if cachedNow(t, r, k) {
					t.Errorf("%s is still remembered", k)
				}
			}
		})
	}
}

// A refund that happens while a refused call is on its way back must not
// let that call's denial be remembered: it describes the state before.
func TestOverLimitCacheInvalidateDuringACall(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{})
	check := sluice.Check{Key: "k", Limit: sluice.PerSecond(1), Cost: 1}
	r.allow(t, check)
	r.store.During = func() { r.cache.Invalidate("k") }
	r.allow(t, check) // refused, but invalidated while in flight
	r.store.During = nil
	if _, asked := r.allow(t, check); !asked {
		t.Error("a denial from before the invalidation was remembered")
	}
	if _, asked := r.allow(t, check); asked {
		t.Error("a denial from after the invalidation was not remembered")
	}
}

func TestOverLimitCacheIsBounded(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{MaxEntries: 16})
	deny := func(key string, l sluice.Limit) {
		check := sluice.Check{Key: key, Limit: l, Cost: 1}
		r.allow(t, check)
		r.allow(t, check)
	}
	for i := range 40 {
		deny(fmt.Sprint("key-", i), sluice.PerHour(1))
	}
	st := r.cache.Stats()
	if st.Entries != 16 || st.Evictions != 24 {
		t.Errorf("stats %+v, want 16 entries and 24 evictions", st)
	}
	// Expired denials make room before live ones are evicted: the two
	// calls the store answers each sweep 4 keys of the 16 expired (the
	// second's sample may hold the new key, live), so room is made without
	// evicting anything.
	r.clk.Advance(2 * time.Hour)
	deny("new", sluice.PerMinute(1))
	if st := r.cache.Stats(); st.Entries > 16-8+2 || st.Evictions != 24 {
		t.Errorf("stats %+v, want at most 10 entries and still 24 evictions", st)
	}
	if _, asked := r.allow(t, sluice.Check{Key: "new", Limit: sluice.PerMinute(1), Cost: 1}); asked {
		t.Error("the new denial was not remembered")
	}
}

func TestOverLimitCacheConcurrent(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	store := &storetest.Flaky{Next: mem}
	cache := overlimit.New(store, overlimit.Options{MaxEntries: 64})
	lim := sluice.NewLimiter(cache)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := map[string]int{}
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				key := fmt.Sprint("k", (g+i)%20)
				d, err := allow(lim, context.Background(), sluice.Check{Key: key, Limit: sluice.PerHour(10), Cost: 1})
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					mu.Lock()
					admitted[key]++
					mu.Unlock()
				}
				if i%500 == 0 {
					cache.Invalidate(key)
				}
			}
		}()
	}
	wg.Wait()
	for k, n := range admitted {
		if n != 10 {
			t.Errorf("%s: admitted %d, want 10", k, n)
		}
	}
	st := cache.Stats()
	if st.RoundTripsSaved+store.Calls.Load() != 8*2000 {
		t.Errorf("saved %d + asked %d != %d calls", st.RoundTripsSaved, store.Calls.Load(), 8*2000)
	}
	if st.RoundTripsSaved < 8*2000/2 {
		t.Errorf("saved only %d round trips of %d calls", st.RoundTripsSaved, 8*2000)
	}
}

// The cache is exact: on any sequence of calls and clock moves (backwards
// too), a memory store behind the cache admits exactly the calls a memory
// store alone admits; whatever the cache refuses itself, the store refuses
// too, and no later (to the microsecond) than the cache says.
func TestPropertyOverLimitCacheIsExact(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		clk := storetest.NewClock()
		alone := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
		behind := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
		defer alone.Close()
		defer behind.Close()
		cache := overlimit.New(behind, overlimit.Options{Clock: clk.Now, MaxEntries: rapid.IntRange(1, 64).Draw(rt, "maxEntries")})
		plain, cached := sluice.NewLimiter(alone), sluice.NewLimiter(cache)

		limits := make([]sluice.Limit, rapid.IntRange(1, 4).Draw(rt, "limits"))
		for i := range limits {
			limits[i] = smallLimit(rt).Named(fmt.Sprint("l", i))
		}
		keys := []string{"a", "b", "c"}
		steppedBack := false
		for range rapid.IntRange(1, 150).Draw(rt, "steps") {
			if rapid.IntRange(0, 2).Draw(rt, "move") == 0 {
				d := time.Duration(rapid.OneOf(
					rapid.Int64Range(0, int64(50*time.Millisecond)),
					rapid.Int64Range(0, int64(3*time.Second)),
				).Draw(rt, "advance"))
				if rapid.IntRange(0, 9).Draw(rt, "back") == 0 {
					d = -d / 4
					steppedBack = steppedBack || d < 0
				}
				clk.Advance(d)
			}
			if rapid.IntRange(0, 30).Draw(rt, "reconfigure") == 0 {
				// A limit changes parameters under the same name, and the
				// operator calls Reset as documented.
				i := rapid.IntRange(0, len(limits)-1).Draw(rt, "which")
				limits[i] = smallLimit(rt).Named(limits[i].Name())
				cache.Reset()
			}
			var checks []sluice.Check
			seen := map[string]bool{}
			for range rapid.IntRange(1, 3).Draw(rt, "checks") {
				k := rapid.SampledFrom(keys).Draw(rt, "key")
				l := rapid.SampledFrom(limits).Draw(rt, "limit")
				if seen[k+"/"+l.Name()] {
					continue
				}
				seen[k+"/"+l.Name()] = true
				checks = append(checks, sluice.Check{Key: k, Limit: l, Cost: rapid.Int64Range(0, l.Burst()+1).Draw(rt, "cost")})
			}
			saved := cache.Stats().RoundTripsSaved
			want, err1 := allow(plain, context.Background(), checks...)
			got, err2 := allow(cached, context.Background(), checks...)
			if err1 != nil || err2 != nil {
				rt.Fatalf("errors: %v, %v", err1, err2)
			}
			if got.Allowed != want.Allowed {
				rt.Fatalf("at %v, %v: with the cache allowed=%v, without %v\nwith: %+v\nwithout: %+v",
					clk.Now(), checks, got.Allowed, want.Allowed, got.Statuses, want.Statuses)
			}
			if cache.Stats().RoundTripsSaved == saved { // the store answered: the same answer
				if !slices.Equal(got.Statuses, want.Statuses) {
					rt.Fatalf("store's answers differ: %+v vs %+v", got.Statuses, want.Statuses)
				}
				continue
			}
			for i, st := range got.Statuses {
				// A check the cache did not evaluate says so, and states
				// no figure; one it states figures of holds its cost.
				if st.Undecided && st != (sluice.Status{Allowed: true, Undecided: true}) ||
					!st.Undecided && st.Allowed && st.Remaining < checks[i].Cost {
					rt.Fatalf("check %d (%v) stated %+v by the cache", i, checks[i], st)
				}
				if st.Allowed {
					// Figures stated of a check beside the refusal: a
					// lower bound of what the store holds, which fits.
					if w := want.Statuses[i]; !steppedBack && !st.Undecided && (!w.Allowed || st.Remaining > w.Remaining) {
						rt.Fatalf("check %d (%v) stated %+v by the cache; the store says %+v", i, checks[i], st, w)
					}
					continue
				}
				// The store counts whole microseconds, the cache (and this
				// clock) nanoseconds: the cache's estimate may be up to 1µs late.
				if w := want.Statuses[i]; w.Allowed || st.RetryAfter-w.RetryAfter > time.Microsecond {
					rt.Fatalf("check %d (%v) refused by the cache with RetryAfter %v; the store says %+v", i, checks[i], st.RetryAfter, w)
				}
				// After a step back a store may hold less than it said
				// (GCRA counts it as time not yet elapsed); the cache, on a
				// monotonic clock in production, need not see it.
				if w := want.Statuses[i]; !steppedBack && st.Remaining > w.Remaining {
					rt.Fatalf("check %d (%v) refused by the cache with %d left; the store says %+v", i, checks[i], st.Remaining, w)
				}
			}
			for _, v := range got.Violated {
				if !slices.Contains(want.Violated, v) {
					rt.Fatalf("the cache names %s violated; the store names %v", v, want.Violated)
				}
			}
		}
	})
}

// smallLimit draws a limit small enough to be refused often.
func smallLimit(rt *rapid.T) sluice.Limit {
	alg := rapid.SampledFrom(sluice.Algorithms()).Draw(rt, "alg")
	q := rapid.Int64Range(1, 5).Draw(rt, "q")
	w := time.Duration(rapid.Int64Range(1, 2000).Draw(rt, "w_ms")) * time.Millisecond
	l := sluice.NewLimit(alg, q, w)
	switch alg {
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmGCRA:
		l = l.WithBurst(rapid.Int64Range(0, 5).Draw(rt, "burst"))
	case sluice.AlgorithmLeakyBucket:
		l = l.WithMaxWait(time.Duration(rapid.Int64Range(0, 1000).Draw(rt, "maxWait_ms")) * time.Millisecond)
	}
	return l.WithShadow(rapid.IntRange(0, 5).Draw(rt, "shadow") == 0)
}

// A refused client refused again by the cache: no store involved.
func BenchmarkOverLimitCacheHit(b *testing.B) {
	mem := memory.New()
	defer mem.Close()
	cache := overlimit.New(mem, overlimit.Options{})
	checks := []sluice.Check{{Key: "abuser", Limit: sluice.PerHour(1), Cost: 1}}
	out := make([]sluice.Status, 1)
	for range 2 {
		cache.Apply(context.Background(), checks, out)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := cache.Apply(context.Background(), checks, out); err != nil || out[0].Allowed {
			b.Fatal(err, out[0])
		}
	}
}

// What the cache adds to a call it passes to the store (a memory store).
func BenchmarkOverLimitCacheMiss(b *testing.B) {
	mem := memory.New()
	defer mem.Close()
	cache := overlimit.New(mem, overlimit.Options{})
	checks := []sluice.Check{{Key: "k", Limit: sluice.PerSecond(1 << 30), Cost: 1}}
	out := make([]sluice.Status, 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := cache.Apply(context.Background(), checks, out); err != nil {
			b.Fatal(err)
		}
	}
}

// allow decides checks with lim into a Decision of its own.
func allow(lim *sluice.Limiter, ctx context.Context, checks ...sluice.Check) (sluice.Decision, error) {
	var d sluice.Decision
	err := lim.Allow(ctx, checks, &d)
	return d, err
}
