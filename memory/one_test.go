package memory_test

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// Limiter.AllowOne decides a single check exactly as AllowInto does: the same
// admission, the same Status, the same error, step after step, on two stores
// that share one clock — for every algorithm, shadow limits, peeks, costs
// over the burst, invalid checks, a clock that steps back, and concurrency
// leases given back by ReleaseOne and Release.
func TestPropertyAllowOneIsAllowInto(t *testing.T) {
	limits := []sluice.Limit{
		sluice.GCRA(5, time.Second),
		sluice.TokenBucket(4, time.Second),
		sluice.GCRA(3, 700*time.Millisecond), // a unit refills in a fraction of a µs: not the quick path
		sluice.LeakyBucket(3, time.Second),
		sluice.LeakyBucket(2, time.Second).WithMaxWait(1500 * time.Millisecond),
		sluice.FixedWindow(4, time.Second),
		sluice.SlidingLog(3, time.Second),
		sluice.SlidingCounter(5, time.Second),
		sluice.Concurrency(2, time.Minute),
		sluice.GCRA(2, time.Second).WithShadow(true),
		sluice.Concurrency(1, time.Minute).WithShadow(true),
		{},                  // the zero Limit: invalid
		sluice.PerSecond(0), // invalid
	}
	keys := []string{"a", "b", "", string(make([]byte, sluice.MaxKeyLen+1))}
	rapid.Check(t, func(t *rapid.T) {
		clock := newClock()
		one := sluice.NewLimiter(newClockedStore(t, clock))
		into := sluice.NewLimiter(newClockedStore(t, clock))
		ctx := context.Background()
		var d sluice.Decision
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			clock.Advance(time.Duration(rapid.Int64Range(-50, 400).Draw(t, "advance ms")) * time.Millisecond)
			c := sluice.Check{
				Key:   keys[rapid.IntRange(0, len(keys)-1).Draw(t, "key")],
				Limit: limits[rapid.IntRange(0, len(limits)-1).Draw(t, "limit")],
				Cost:  rapid.Int64Range(-1, 6).Draw(t, "cost"),
			}
			var st sluice.Status
			ok, errOne := one.AllowOne(ctx, &st, &c)
			checks := []sluice.Check{c}
			errInto := into.AllowInto(ctx, &d, checks)
			if (errOne == nil) != (errInto == nil) || errOne != nil && errOne.Error() != errInto.Error() {
				t.Fatalf("step %d (%s, key %.8q, cost %d): AllowOne's error %v, AllowInto's %v", step, c.Limit, c.Key, c.Cost, errOne, errInto)
			}
			if errOne != nil {
				continue
			}
			if ok != d.Allowed || st != d.Statuses[0] {
				t.Fatalf("step %d (%s, key %q, cost %d): AllowOne = %v, %+v; AllowInto = %v, %+v",
					step, c.Limit, c.Key, c.Cost, ok, st, d.Allowed, d.Statuses[0])
			}
			if st.Lease != 0 && rapid.Bool().Draw(t, "release") {
				if err := one.ReleaseOne(ctx, &st, &c); err != nil {
					t.Fatal(err)
				}
				if err := into.Release(ctx, checks, &d); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// newClockedStore returns a memory store reading clock, closed when t ends.
func newClockedStore(t *rapid.T, clock *fakeClock) *memory.Store {
	s := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { s.Close() })
	return s
}

// AllowOne on a key the store holds allocates nothing.
func TestAllowOneAllocatesNothing(t *testing.T) {
	_, lim, _ := newStore(t)
	ctx := context.Background()
	c := sluice.Check{Key: "k", Limit: sluice.PerSecond(1_000_000_000), Cost: 1}
	var st sluice.Status
	if ok, err := lim.AllowOne(ctx, &st, &c); !ok || err != nil {
		t.Fatalf("AllowOne = %v, %v", ok, err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if ok, err := lim.AllowOne(ctx, &st, &c); !ok || err != nil {
			t.Fatalf("AllowOne = %v, %v", ok, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per AllowOne, want 0", allocs)
	}
}

// A key has one state whichever path decides it: a call of one check (which
// hashes keys of 8 to 16 bytes inline) and a call of two (which hashes
// every key with keyHasher.of) spend the same quota, for every key length
// up to 40 bytes and bytes of every value.
func TestOneKeyOneState(t *testing.T) {
	_, lim, _ := newStore(t)
	ctx := context.Background()
	perMinute, perHour := sluice.PerMinute(10), sluice.PerHour(100)
	for n := 1; n <= 40; n++ {
		key := make([]byte, n)
		for i := range key {
			key[i] = byte(n*31 + i*97)
		}
		one := sluice.Check{Key: string(key), Limit: perMinute, Cost: 1}
		two := []sluice.Check{one, {Key: string(key), Limit: perHour, Cost: 1}}
		var st sluice.Status
		for call, want := range []int64{9, 8, 7, 6} {
			var got int64
			if call%2 == 0 {
				if _, err := lim.AllowOne(ctx, &st, &one); err != nil {
					t.Fatal(err)
				}
				got = st.Remaining
			} else {
				d, err := lim.Allow(ctx, two...)
				if err != nil {
					t.Fatal(err)
				}
				got = d.Statuses[0].Remaining
			}
			if got != want {
				t.Fatalf("key of %d bytes, call %d (of %d checks): %d remaining, want %d", n, call+1, call%2+1, got, want)
			}
		}
	}
}
