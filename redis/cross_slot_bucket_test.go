package redis

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// A bucket's reservation, refunded after other calls wrote the key, leaves
// the bucket exactly as those calls alone would have: after two other
// calls in turn, and when another call's reservation came between (its
// refund first or last). Every decision after the refunds is the
// reference's, which saw only the other calls.
func TestABucketsRefundAfterOtherWritesLeavesItAsIfNeverTaken(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	type step struct {
		reserve string // a reservation of 4 under this token
		refund  string // the refund of this token's reservation
		cost    int64  // else another call of this cost
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"two other calls between", []step{{reserve: "a"}, {cost: 2}, {cost: 2}, {refund: "a"}}},
		{"a call, then another reservation refunded first", []step{{reserve: "a"}, {cost: 2}, {reserve: "b"}, {refund: "b"}, {refund: "a"}}},
		{"a call, then another reservation refunded last", []step{{reserve: "a"}, {cost: 2}, {reserve: "b"}, {refund: "a"}, {refund: "b"}}},
		{"another reservation, then a call", []step{{reserve: "a"}, {reserve: "b"}, {cost: 2}, {refund: "a"}, {refund: "b"}}},
		{"another reservation refunded, then calls", []step{{reserve: "a"}, {reserve: "b"}, {refund: "a"}, {cost: 2}, {cost: 2}, {cost: 2}, {cost: 2}, {refund: "b"}}},
	} {
		for _, l := range []sluice.Limit{
			sluice.TokenBucket(3, time.Second).WithBurst(20),
			sluice.LeakyBucket(3, time.Second).WithBurst(20),
			sluice.LeakyBucket(3, time.Second).WithBurst(20).WithMaxWait(time.Second),
			sluice.GCRA(3, time.Second).WithBurst(20),
		} {
			t.Run(tc.name+"/"+l.String(), func(t *testing.T) {
				clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
				store := New(client, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
				ctx := context.Background()
				subject := "bucket-undo-" + tc.name + l.String()
				keys := []string{Key(subject, l.Name())}
				reserved := map[string]reservation{}
				var ref sluice.State
				out := make([]sluice.Status, 1)
				for i, s := range tc.steps {
					clock.Advance(100 * time.Millisecond)
					switch {
					case s.reserve != "":
						c := []sluice.Check{{Key: subject, Limit: l, Cost: 4}}
						r, err := store.run(ctx, modeReserve, s.reserve, c, keys, []int{0}, out)
						if err != nil || r.refused {
							t.Fatalf("step %d: reserve: %+v, %v", i, out, err)
						}
						reserved[s.reserve] = reservation{idx: []int{0}, undo: r.undo}
					case s.refund != "":
						c := []sluice.Check{{Key: subject, Limit: l, Cost: 4}}
						if err := store.refund(ctx, s.refund, c, keys, reserved[s.refund], out); err != nil {
							t.Fatalf("step %d: %v", i, err)
						}
					default:
						var w sluice.Status
						ref, w = storetest.Decided(l.Decide(ref, clock.Micros(), s.cost))
						if err := store.Apply(ctx, []sluice.Check{{Key: subject, Limit: l, Cost: s.cost}}, out); err != nil || !out[0].Allowed || !w.Allowed {
							t.Fatalf("step %d: other call: %+v, %v; reference %+v", i, out[0], err, w)
						}
					}
				}
				for i := range 12 {
					var w sluice.Status
					ref, w = storetest.Decided(l.Decide(ref, clock.Micros(), 1))
					if err := store.Apply(ctx, []sluice.Check{{Key: subject, Limit: l, Cost: 1}}, out); err != nil {
						t.Fatal(err)
					}
					if out[0] != w {
						t.Fatalf("call %d after the refunds: %+v, want %+v as if the reservations never ran", i, out[0], w)
					}
					clock.Advance(50 * time.Millisecond)
				}
			})
		}
	}
}
