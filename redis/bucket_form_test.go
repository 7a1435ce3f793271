package redis

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A token bucket state in the form earlier versions wrote (b = 0: a the
// ticks missing at t, its last update) is read as they read it, a t ahead
// of a clock that stepped back counting as t, and the Go kernel reads the
// same state in sluice.State's earlier form (B = 0) alike; the next write
// keeps the bucket's arrival time and the rq its ticks are counted in (b).
func TestABucketStateInTheEarlierFormIsReadAsBefore(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	store := New(srv.Client(t), WithTimeForTesting(func() time.Time { return now }), WithTimeout(testTimeout))
	l := sluice.TokenBucket(10, time.Hour).Named("tb") // a unit is 360e6 ticks, 1 refilling per µs
	const unit = 360_000_000
	last := sluice.MicrosSinceEpoch(now.Add(time.Hour)) // the clock has since stepped back an hour
	srv.MustDo("SET", Key("u", "tb"), "4 "+strconv.FormatInt(last, 10)+" "+strconv.FormatInt(4*unit, 10)+" 0", "PX", "100000000")
	out := make([]sluice.Status, 1)
	if err := store.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: l, Cost: 1}}, out); err != nil {
		t.Fatal(err)
	}
	want := sluice.Status{Allowed: true, Remaining: 5, ResetAfter: time.Hour + 30*time.Minute}
	if got := out[0]; got.Allowed != want.Allowed || got.Remaining != want.Remaining || got.ResetAfter != want.ResetAfter {
		t.Errorf("Redis: %+v, want allowed with 5 left, full again in 1h30m: 4 missing an hour ahead, and this one", got)
	}
	_, st, err := l.Decide(sluice.State{T: last, A: 4 * unit}, sluice.MicrosSinceEpoch(now), 1)
	if err != nil || st.Allowed != want.Allowed || st.Remaining != want.Remaining || st.ResetAfter != want.ResetAfter {
		t.Errorf("Go: %+v (%v), want what Redis says", st, err)
	}
	raw, err := srv.Do("GET", Key("u", "tb"))
	if err != nil {
		t.Fatal(err)
	}
	g, ts, a, b, ok := stringState(raw.(string))
	if !ok || g != "4" || ts != last || a != 5*unit || b != 1 {
		t.Errorf("stored %q = %q %d %d %d (%v), want 4 %d %d 1 packed", raw, g, ts, a, b, ok, last, 5*unit)
	}
}
