package overlimit_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// A refusal the cache repeats states what the store would state at that
// moment: the units left (which a cost-1 request may use), the wait and the
// time until full. The store alone, fed the same calls, is the reference;
// these algorithms tell the cache enough to be exact (a fixed window holds
// its remainder until its end, a bucket refills at its rate).
func TestACachedRefusalStatesTheStoresFigures(t *testing.T) {
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(10, time.Second),
		sluice.TokenBucket(10, time.Second),
		sluice.NewLimit(sluice.AlgorithmGCRA, 10, time.Second),
		sluice.NewLimit(sluice.AlgorithmLeakyBucket, 10, time.Second),
		sluice.NewLimit(sluice.AlgorithmLeakyBucket, 10, time.Second).WithMaxWait(200 * time.Millisecond),
	} {
		t.Run(l.String(), func(t *testing.T) {
			clk := storetest.NewClock()
			alone := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
			behind := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
			t.Cleanup(func() { alone.Close(); behind.Close() })
			cache := overlimit.New(behind, overlimit.Options{Clock: clk.Now, MaxAge: time.Hour})
			plain, cached := sluice.NewLimiter(alone), sluice.NewLimiter(cache)
			both := func(cost int64) (want, got sluice.Decision) {
				t.Helper()
				checks := []sluice.Check{{Key: "k", Limit: l, Cost: cost}}
				var err1, err2 error
				want, err1 = allow(plain, context.Background(), checks...)
				got, err2 = allow(cached, context.Background(), checks...)
				if err1 != nil || err2 != nil {
					t.Fatalf("errors: %v, %v", err1, err2)
				}
				return want, got
			}
			if want, _ := both(8); !want.Allowed {
				t.Fatal("the first 8 units were refused")
			}
			for _, cost := range []int64{5, 5} { // the store's refusal, then the cache's
				want, got := both(cost)
				if want.Allowed || got.Allowed || got.Statuses[0] != want.Statuses[0] {
					t.Fatalf("cost %d: cache %+v, store %+v", cost, got.Statuses[0], want.Statuses[0])
				}
			}
			saved := cache.Stats().RoundTripsSaved
			for range 3 {
				clk.Advance(50 * time.Millisecond)
				want, got := both(5)
				if got.Statuses[0] != want.Statuses[0] {
					t.Errorf("at +%v: cache %+v, store %+v", clk.Now().Sub(storetest.NewClock().Now()), got.Statuses[0], want.Statuses[0])
				}
				if want.Allowed {
					break // the store's own wait is over
				}
			}
			if cache.Stats().RoundTripsSaved == saved {
				t.Error("the cache answered nothing itself")
			}
		})
	}
}

// A refusal remembered for one cost refuses a larger one too; the wait it
// states is the larger cost's, as the store states it: a bucket needs
// (c'-c)·W/Q longer, a fixed window opens for every cost at its end.
func TestACachedRefusalOfALargerCostStatesItsWait(t *testing.T) {
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(10, time.Second),
		sluice.TokenBucket(10, time.Second),
		sluice.NewLimit(sluice.AlgorithmGCRA, 10, time.Second),
		sluice.NewLimit(sluice.AlgorithmLeakyBucket, 10, time.Second).WithMaxWait(200 * time.Millisecond),
		sluice.NewLimit(sluice.AlgorithmGCRA, 3, time.Second), // 333⅓ms a unit
	} {
		t.Run(l.String(), func(t *testing.T) {
			clk := storetest.NewClock()
			alone := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
			behind := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
			t.Cleanup(func() { alone.Close(); behind.Close() })
			cache := overlimit.New(behind, overlimit.Options{Clock: clk.Now, MaxAge: time.Hour})
			plain, cached := sluice.NewLimiter(alone), sluice.NewLimiter(cache)
			both := func(cost int64) (want, got sluice.Status) {
				t.Helper()
				checks := []sluice.Check{{Key: "k", Limit: l, Cost: cost}}
				w, err1 := allow(plain, context.Background(), checks...)
				g, err2 := allow(cached, context.Background(), checks...)
				if err1 != nil || err2 != nil {
					t.Fatalf("errors: %v, %v", err1, err2)
				}
				return w.Statuses[0], g.Statuses[0]
			}
			// 1 left, and the smallest cost a queue cannot delay enough.
			refused := 2 + int64(l.MaxWait())*l.Quantity()/int64(l.Window())
			both(l.Burst() - 1)
			if want, _ := both(refused); want.Allowed {
				t.Fatalf("cost %d was admitted", refused)
			}
			saved := cache.Stats().RoundTripsSaved
			clk.Advance(10 * time.Millisecond)
			for cost := refused; cost <= l.Burst(); cost++ {
				want, got := both(cost)
				// The store rounds the wait of units of 333⅓ms up to a µs
				// once; the cache adds whole µs to a wait rounded already,
				// which may be 1µs early.
				early := want.RetryAfter - got.RetryAfter
				got.RetryAfter = want.RetryAfter
				if want.Allowed || got != want || early < 0 || early > time.Microsecond {
					t.Errorf("cost %d: cache %+v (RetryAfter %v early), store %+v", cost, got, early, want)
				}
			}
			if cache.Stats().RoundTripsSaved == saved {
				t.Error("the cache answered nothing itself")
			}
		})
	}
}

// A call the cache refuses may carry a check whose cost exceeds its
// limit's Burst: the store refuses that check whatever its state, with no
// wait that helps, and so does the cache, so the call's wait is Never and
// its violated limits name both.
func TestACachedRefusalRefusesACostAboveBurstBesideIt(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{})
	rps, bulk := sluice.PerSecond(1), sluice.TokenBucket(5, time.Minute).Named("bulk")
	r.allow(t, sluice.Check{Key: "k", Limit: rps, Cost: 1})
	r.allow(t, sluice.Check{Key: "k", Limit: rps, Cost: 1}) // refused and remembered
	batch := []sluice.Check{{Key: "k", Limit: rps, Cost: 1}, {Key: "k", Limit: bulk, Cost: 6}}
	d, asked := r.allow(t, batch...)
	if asked {
		t.Fatal("the store was asked")
	}
	if d.Allowed || d.RetryAfter != sluice.Never || !slices.Equal(d.Violated, []string{"per-second", "bulk"}) {
		t.Errorf("cached decision: allowed %v, RetryAfter %v, violated %v; want refused, Never, [per-second bulk]", d.Allowed, d.RetryAfter, d.Violated)
	}
	if st := d.Statuses[1]; st.Allowed || st.RetryAfter != sluice.Never {
		t.Errorf("bulk's status %+v, want refused with RetryAfter Never", st)
	}
}

// A call the cache refuses states, for the checks beside the remembered
// one, what the store said of them when it refused the same call (the
// figures of a peek), as they stand now: a per-day quota is not told as
// spent because another limit refused.
func TestACachedRefusalStatesTheFiguresOfTheChecksBesideIt(t *testing.T) {
	clk := storetest.NewClock()
	alone := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	behind := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { alone.Close(); behind.Close() })
	cache := overlimit.New(behind, overlimit.Options{Clock: clk.Now})
	plain, cached := sluice.NewLimiter(alone), sluice.NewLimiter(cache)
	batch := []sluice.Check{
		{Key: "k", Limit: sluice.PerSecond(1), Cost: 1},
		{Key: "k", Limit: sluice.FixedWindow(1000, 24*time.Hour).Named("per-day"), Cost: 1},
		{Key: "k", Limit: sluice.TokenBucket(10, time.Second).Named("bucket"), Cost: 2},
		{Key: "global", Limit: sluice.NewLimit(sluice.AlgorithmSlidingLog, 100, time.Minute).Named("global"), Cost: 1},
	}
	for i, advance := range []time.Duration{0, 0, 100 * time.Millisecond, 300 * time.Millisecond, 200 * time.Millisecond} {
		clk.Advance(advance)
		want, err1 := allow(plain, context.Background(), batch...)
		got, err2 := allow(cached, context.Background(), batch...)
		if err1 != nil || err2 != nil {
			t.Fatalf("errors: %v, %v", err1, err2)
		}
		if !slices.Equal(got.Statuses, want.Statuses) {
			t.Errorf("call %d: cache %+v\nstore %+v", i+1, got.Statuses, want.Statuses)
		}
	}
	if cache.Stats().RoundTripsSaved != 3 {
		t.Errorf("the cache answered %d calls itself, want 3", cache.Stats().RoundTripsSaved)
	}
}

// A check beside a remembered refusal whose remembered units do not cover
// a larger cost would be refused by the store after a wait the cache does
// not know, and a check the cache knows nothing of has no figures at all:
// both are stated Undecided, not as a limit with nothing left.
func TestACachedRefusalStatesNoFiguresOfWhatItDidNotEvaluate(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{})
	perSecond, perDay := sluice.PerSecond(1), sluice.FixedWindow(3, 24*time.Hour).Named("per-day")
	batch := []sluice.Check{{Key: "k", Limit: perSecond, Cost: 1}, {Key: "k", Limit: perDay, Cost: 1}}
	r.allow(t, batch...)
	if d, _ := r.allow(t, batch...); d.Allowed || d.Statuses[1].Remaining != 2 {
		t.Fatalf("the store's refusal: %+v", d)
	}
	batch[1].Cost = 3 // more than the 2 the store said per-day holds
	batch = append(batch, sluice.Check{Key: "k", Limit: sluice.PerMinute(60), Cost: 1})
	d, asked := r.allow(t, batch...)
	if asked {
		t.Fatal("the store was asked")
	}
	undecided := sluice.Status{Allowed: true, Undecided: true}
	if d.Allowed || d.Statuses[0].Undecided || d.Statuses[1] != undecided || d.Statuses[2] != undecided {
		t.Errorf("statuses %+v, want per-second refused, the others %+v", d.Statuses, undecided)
	}
	if d.Limit != perSecond {
		t.Errorf("the decision's limit is %v, want per-second", d.Limit)
	}
}

// The figures of checks beside a refusal are kept only for a refusal the
// cache remembers: a call refused for a cost above Burst, which the store
// answers each time, leaves nothing behind.
func TestARefusalNotRememberedKeepsNoFiguresBesideIt(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{})
	batch := []sluice.Check{{Key: "k", Limit: sluice.PerSecond(1), Cost: 2}, {Key: "k", Limit: sluice.PerMinute(60), Cost: 1}}
	if d, _ := r.allow(t, batch...); d.Allowed {
		t.Fatal("a cost above Burst was admitted")
	}
	if n := r.cache.Stats().Entries; n != 0 {
		t.Errorf("the cache holds %d entries, want 0", n)
	}
}

// A shadow limit that would refuse beside a refusal the cache remembers
// says so in the refusals the cache repeats, as the store says it: an
// operator trying a limit in shadow counts its would-be refusals of an
// abusive client too.
func TestACachedRefusalStatesAShadowLimitsRefusal(t *testing.T) {
	clk := storetest.NewClock()
	alone := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	behind := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { alone.Close(); behind.Close() })
	cache := overlimit.New(behind, overlimit.Options{Clock: clk.Now})
	plain, cached := sluice.NewLimiter(alone), sluice.NewLimiter(cache)
	batch := []sluice.Check{
		{Key: "k", Limit: sluice.PerSecond(1), Cost: 1},
		{Key: "k", Limit: sluice.TokenBucket(1, 2*time.Second).Named("dry-run").WithShadow(true), Cost: 1},
	}
	for i, advance := range []time.Duration{0, 0, 100 * time.Millisecond, 300 * time.Millisecond} {
		clk.Advance(advance)
		want, err1 := allow(plain, context.Background(), batch...)
		got, err2 := allow(cached, context.Background(), batch...)
		if err1 != nil || err2 != nil {
			t.Fatalf("errors: %v, %v", err1, err2)
		}
		if !slices.Equal(got.Statuses, want.Statuses) {
			t.Errorf("call %d: cache %+v\nstore %+v", i+1, got.Statuses, want.Statuses)
		}
	}
	if cache.Stats().RoundTripsSaved != 2 {
		t.Errorf("the cache answered %d calls itself, want 2", cache.Stats().RoundTripsSaved)
	}
}

// What the cache keeps to state beside a refusal (the figures of checks
// that fitted, a shadow limit's refusal) is the first thing a full cache
// forgets: never a denial that spares the store a round trip.
func TestAFullCacheForgetsFiguresBeforeDenials(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{MaxEntries: 2})
	batch := []sluice.Check{{Key: "a", Limit: sluice.PerSecond(1), Cost: 1}, {Key: "a", Limit: sluice.PerDay(1000), Cost: 1}}
	r.allow(t, batch...)
	r.allow(t, batch...) // a's denial and its per-day figures
	other := sluice.Check{Key: "b", Limit: sluice.PerSecond(1), Cost: 1}
	r.allow(t, other)
	r.allow(t, other) // b's denial needs room
	if d, asked := r.allow(t, batch...); asked || d.Allowed {
		t.Errorf("a's call: asked %v, allowed %v; want refused by the cache", asked, d.Allowed)
	}
}
