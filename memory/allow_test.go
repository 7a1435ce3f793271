package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Allow on keys the store holds allocates nothing, for one check and for
// a plan of three limits (two of the subject's, one global).
func TestAllowAllocatesNothing(t *testing.T) {
	_, lim, _ := newStore(t)
	ctx := context.Background()
	plan := []sluice.Check{
		{Key: "k", Limit: sluice.PerSecond(1_000_000_000), Cost: 1},
		{Key: "k", Limit: sluice.TokenBucket(1_000_000_000, time.Minute).Named("per-minute"), Cost: 1},
		{Key: "*", Limit: sluice.FixedWindow(1_000_000_000, time.Hour).Named("global"), Cost: 1},
	}
	for _, checks := range [][]sluice.Check{plan[:1], plan} {
		var d sluice.Decision
		if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
			t.Fatalf("Allow = %+v, %v", d, err)
		}
		allocs := testing.AllocsPerRun(1000, func() {
			if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
				t.Fatalf("Allow = %+v, %v", d, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%d checks: %.1f allocations per Allow, want 0", len(checks), allocs)
		}
	}
}

// A key has one state whichever way a call reaches it: a call of one check
// and a call of two spend the same quota, for every key length up to 40
// bytes and bytes of every value.
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
		var d sluice.Decision
		for call, want := range []int64{9, 8, 7, 6} {
			checks := two
			if call%2 == 0 {
				checks = []sluice.Check{one}
			}
			if err := lim.Allow(ctx, checks, &d); err != nil {
				t.Fatal(err)
			}
			got := d.Statuses[0].Remaining
			if got != want {
				t.Fatalf("key of %d bytes, call %d (of %d checks): %d remaining, want %d", n, call+1, call%2+1, got, want)
			}
		}
	}
}
