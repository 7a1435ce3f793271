package quota

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Edge cases of Until.

// Concurrency: "zero while a slot is free, else a second, the interval at
// which a refused client is told to poll".
func TestConcurrencyUntilIsASecondOnceNoSlotIsFree(t *testing.T) {
	qt := Of(sluice.Concurrency(2, time.Minute))
	if qt.W != 0 {
		t.Fatalf("concurrency quota %+v, want no window", qt)
	}
	if got := qt.Until(1, time.Minute, 0); got != 0 {
		t.Errorf("a slot free: Until %v, want 0", got)
	}
	if got := qt.Until(0, time.Minute, time.Second); got != time.Second {
		t.Errorf("no slot free: Until %v, want 1s", got)
	}
	if got := qt.Until(0, 0, 0); got != time.Second {
		t.Errorf("no slot free (no reset known): Until %v, want 1s", got)
	}
}

// For the bucket family Until is "the moment the next whole unit has
// refilled (to within 1 µs)", and that µs is late, never early: at now +
// Until more of the quota is available. Token bucket of 3 per second,
// burst 3, emptied: a unit refills every 333,333⅓ µs, so the next one is
// there at 333,334 µs, not at 333,333.
func TestBucketUntilIsNeverBeforeTheNextUnit(t *testing.T) {
	for _, l := range []sluice.Limit{
		sluice.TokenBucket(3, time.Second),
		sluice.TokenBucket(3, time.Second).WithBurst(2),
		sluice.TokenBucket(7, 10*time.Second).WithBurst(5),
	} {
		if err := l.Err(); err != nil {
			t.Fatal(err)
		}
		qt := Of(l)
		const now = 1_000_000_000
		s, st, err := l.Decide(sluice.State{}, now, l.Burst())
		if err != nil || !st.Allowed {
			t.Fatalf("%v: emptying the bucket: %+v, %v", l, st, err)
		}
		cur := int64(now)
		for i := 0; i < 3 && st.Remaining < l.Burst(); i++ {
			until := qt.Until(st.Remaining, st.ResetAfter, st.RetryAfter)
			if until <= 0 {
				t.Fatalf("%v: Until %v with %d remaining", l, until, st.Remaining)
			}
			at := cur + int64(until/time.Microsecond)
			_, later, _ := l.Decide(s, at, 0)
			if later.Remaining <= st.Remaining {
				t.Fatalf("%v: %d remaining, Until %v; at now + Until still %d remaining", l, st.Remaining, until, later.Remaining)
			}
			// The next whole unit, a µs earlier, is not yet there, or Until
			// would not be "to within 1 µs".
			_, early, _ := l.Decide(s, at-2, 0)
			if early.Remaining > st.Remaining {
				t.Fatalf("%v: Until %v is more than 1 µs late: 2 µs earlier %d remaining", l, until, early.Remaining)
			}
			cur, st = at, later
		}
	}
}
