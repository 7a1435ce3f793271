package sluice_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A plan with three limits is checked in one call: admitted by all, or by
// none. Here the per-second burst refuses the sixth request, and nothing of
// it is charged to the minute or the day.
func Example() {
	// The store's clock stands still here, so what it prints does not
	// depend on how fast the example runs; a program leaves WithClock out.
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := memory.New(memory.WithClock(func() time.Time { return at }))
	defer store.Close()
	limiter := sluice.NewLimiter(store)

	perSecond := sluice.TokenBucket(5, time.Second)      // 5/s, bursts of 5
	perMinute := sluice.SlidingCounter(100, time.Minute) // 100/min
	perDay := sluice.FixedWindow(1000, 24*time.Hour)     // 1000/day
	key := "user:42"

	// The checks and the Decision are kept from call to call: Allow then
	// allocates nothing.
	checks := []sluice.Check{
		{Key: key, Limit: perSecond, Cost: 1},
		{Key: key, Limit: perMinute, Cost: 1},
		{Key: key, Limit: perDay, Cost: 1},
	}
	var d sluice.Decision
	for i := 1; i <= 6; i++ {
		if err := limiter.Allow(context.Background(), checks, &d); err != nil {
			fmt.Println("error:", err)
			return
		}
		if d.Allowed {
			fmt.Printf("request %d: allowed, %d left in %s\n", i, d.Remaining, d.Limit.Name())
		} else {
			fmt.Printf("request %d: refused by %v, retry in %v\n", i, d.Violated, d.RetryAfter)
			fmt.Printf("per-minute still has %d\n", d.Statuses[1].Remaining)
		}
	}
	// Output:
	// request 1: allowed, 4 left in per-second
	// request 2: allowed, 3 left in per-second
	// request 3: allowed, 2 left in per-second
	// request 4: allowed, 1 left in per-second
	// request 5: allowed, 0 left in per-second
	// request 6: refused by [per-second], retry in 200ms
	// per-minute still has 95
}

// Decide is the pure core: state in, state and status out, time as integer
// microseconds. It is what the stores and the simulator run; its error
// (an invalid Limit, a negative cost) means nothing was decided.
func ExampleLimit_Decide() {
	l := sluice.TokenBucket(5, time.Second).WithBurst(10) // 10 tokens, 5/s
	var s sluice.State
	now := sluice.MicrosSinceEpoch(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

	s, st, err := l.Decide(s, now, 8)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("8 at t=0:", st.Allowed, st.Remaining)
	_, st, _ = l.Decide(s, now+500_000, 0) // a peek half a second later
	fmt.Println("peek at 0.5s:", st.Remaining)
	_, st, _ = l.Decide(s, now+500_000, 5)
	fmt.Println("5 at 0.5s:", st.Allowed, "retry after", st.RetryAfter)

	_, _, err = sluice.Limit{}.Decide(s, now, 1)
	fmt.Println(errors.Is(err, sluice.ErrInvalidLimit))
	// Output:
	// 8 at t=0: true 2
	// peek at 0.5s: 4
	// 5 at 0.5s: false retry after 100ms
	// true
}

// One limit per request, the common case: a slice of one check.
func ExampleLimiter_Allow() {
	store := memory.New()
	defer store.Close()
	limiter := sluice.NewLimiter(store)

	checks := []sluice.Check{{Key: "203.0.113.7", Limit: sluice.PerMinute(3), Cost: 1}}
	var d sluice.Decision
	for i := 1; i <= 4; i++ {
		if err := limiter.Allow(context.Background(), checks, &d); err != nil {
			fmt.Println("error:", err)
			return
		}
		if d.Allowed {
			fmt.Printf("request %d: allowed, %d left\n", i, d.Remaining)
		} else {
			fmt.Printf("request %d: refused, retry in about %v\n", i, d.RetryAfter.Round(time.Second))
		}
	}
	// Output:
	// request 1: allowed, 2 left
	// request 2: allowed, 1 left
	// request 3: allowed, 0 left
	// request 4: refused, retry in about 20s
}

// Wait blocks until the checks fit: here a worker waits for one of two
// in-flight slots, which another worker gives back 20ms later.
func ExampleLimiter_Wait() {
	store := memory.New()
	defer store.Close()
	limiter := sluice.NewLimiter(store)
	ctx := context.Background()
	slots := []sluice.Check{{Key: "exports", Limit: sluice.Concurrency(2, time.Minute), Cost: 1}}

	var first, second, third sluice.Decision
	limiter.Allow(ctx, slots, &first)
	limiter.Allow(ctx, slots, &second)
	go func() {
		time.Sleep(20 * time.Millisecond)
		limiter.Release(ctx, slots, &first) // the first export ends
	}()
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := limiter.Wait(wait, slots, &third); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("third export admitted:", third.Allowed)
	limiter.Release(ctx, slots, &second)
	limiter.Release(ctx, slots, &third)
	// Output: third export admitted: true
}
