package redis

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A key written gets "a TTL of the status's reset-after rounded up to whole
// ms" (commit in lua/state.lua), so that it never expires before its state
// is worth a fresh one. Two keys written by one call (one script run): a
// bucket full again in exactly 100 s expires at 100,000 ms; one full again
// in 100,000,001 µs must expire a millisecond later, at 100,001 ms, not
// with it.
func TestAKeysTTLIsItsResetAfterRoundedUpToAMillisecond(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	store := New(srv.Client(t), WithTimeout(testTimeout)) // Redis's clock: the least TTL is 1 ms
	whole := sluice.TokenBucket(1, 100*time.Second).Named("whole")
	// 3 per 300,000,001 µs: a unit refills in ⌈300000001/3⌉ = 100,000,001 µs.
	frac := sluice.TokenBucket(3, 300*time.Second+time.Microsecond).Named("frac")
	checks := []sluice.Check{{Key: "u", Limit: whole, Cost: 1}, {Key: "u", Limit: frac, Cost: 1}}
	out := make([]sluice.Status, 2)
	if err := store.Apply(context.Background(), checks, out); err != nil {
		t.Fatal(err)
	}
	if out[0].ResetAfter != 100*time.Second || out[1].ResetAfter != 100*time.Second+time.Microsecond {
		t.Fatalf("%+v, want full again in 100s and 100.000001s", out)
	}
	at := func(name string) int64 {
		v, err := srv.Do("PEXPIRETIME", Key("u", name))
		if err != nil {
			t.Fatal(err)
		}
		return v.(int64)
	}
	// Redis 7.0 takes each expiry's base from its clock as the script
	// writes, so the second write's may be a millisecond later, never
	// earlier: at least 1 ms apart.
	if w, f := at("whole"), at("frac"); f-w < 1 {
		t.Errorf("PEXPIRETIME %d and %d, want the second at least 1 ms after the first: 100,000,001 µs rounds up to 100,001 ms", w, f)
	}
}

// A state a refused call reads keeps its key until its limit has it back
// at full quota, the TTL running "to the last whole millisecond at or
// before that time" (outlive in lua/state.lua), no later. At a whole
// millisecond, one bucket full again in exactly 100 s and one full again
// in 100,000,500 µs, refused in one call (one script run), both get
// 100,000 ms: the half millisecond is not rounded up.
func TestARefusedKeyLivesToTheLastWholeMillisecondOfItsReset(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // a whole millisecond
	store := New(srv.Client(t), WithTimeForTesting(func() time.Time { return now }), WithTimeout(testTimeout))
	store.minTTL = "1"                                                                // as in production: no least TTL of a test's
	whole := sluice.TokenBucket(1, 100*time.Second).Named("whole")                    // rq = 1, rw = 1e8
	half := sluice.TokenBucket(1, 100*time.Second+500*time.Microsecond).Named("half") // rq = 1, rw = 100000500
	at := sluice.MicrosSinceEpoch(now)
	// Empty buckets in the earlier form (a ticks missing at t = now), with a
	// short TTL that a refusal lengthens.
	srv.MustDo("SET", Key("u", "whole"), "4 "+itoa(int(at))+" 100000000 0", "PX", "20000")
	srv.MustDo("SET", Key("u", "half"), "4 "+itoa(int(at))+" 100000500 0", "PX", "20000")
	checks := []sluice.Check{{Key: "u", Limit: half, Cost: 1}, {Key: "u", Limit: whole, Cost: 1}}
	out := make([]sluice.Status, 2)
	if err := store.Apply(context.Background(), checks, out); err != nil {
		t.Fatal(err)
	}
	if out[0].Allowed || out[1].Allowed || out[0].ResetAfter != 100*time.Second+500*time.Microsecond || out[1].ResetAfter != 100*time.Second {
		t.Fatalf("%+v, want both refused, full again in 100s and 100.0005s", out)
	}
	exp := func(name string) int64 {
		v, err := srv.Do("PEXPIRETIME", Key("u", name))
		if err != nil {
			t.Fatal(err)
		}
		return v.(int64)
	}
	// Redis 7.0 takes each expiry's base from its clock as the script
	// writes: the second key's ("whole") may be a millisecond later, never
	// earlier, so "half" expires no later than "whole".
	if h, w := exp("half"), exp("whole"); h > w {
		t.Errorf("PEXPIRETIME %d and %d, want the first no later: 100,000,500 µs from a whole ms lasts to the 100,000th ms", h, w)
	}
}
