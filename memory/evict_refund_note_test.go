package memory

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Contract: a shard remembers evictions with its resets, in one bound of
// maxResetsPerShard notes, but an eviction's note never pushes out a
// Reset's: a flood of evictions leaves every Reset's note in place (so a
// receipt or lease from before a Reset never reaches its fresh state
// because keys were evicted), and a Reset's note pushes out an eviction's.
func TestEvictionNotesNeverPushOutAResetsNote(t *testing.T) {
	const at, life = 1000, 1 << 40
	id := func(i int) resetID { return resetID{hash{uint64(i), 0}, 1} }
	var sh shard
	for i := range maxResetsPerShard {
		sh.note(id(i), at, life, false)
	}
	for i := range 4 * maxResetsPerShard {
		sh.note(id(maxResetsPerShard+i), at, life, true)
	}
	if len(sh.resets) > maxResetsPerShard {
		t.Errorf("%d notes held, over the bound of %d", len(sh.resets), maxResetsPerShard)
	}
	for i := range maxResetsPerShard {
		if r, ok := sh.resets[id(i)]; !ok || r.evicted {
			t.Fatalf("Reset %d's note pushed out by evictions' (%+v, %v)", i, r, ok)
		}
	}

	var full shard
	for i := range maxResetsPerShard {
		full.note(id(i), at, life, true)
	}
	full.note(id(-1), at, life, false)
	if r, ok := full.resets[id(-1)]; !ok || r.evicted {
		t.Errorf("a Reset's note not kept in a shard full of evictions' (%+v, %v)", r, ok)
	}
	if len(full.resets) > maxResetsPerShard {
		t.Errorf("%d notes held, over the bound of %d", len(full.resets), maxResetsPerShard)
	}
}

// Contract: a receipt given before the key's state was evicted is not
// refunded into the state the key counts afresh since, for every
// refundable algorithm (Store.Refund; the Redis store skips a receipt from
// before its state's creation). One shard holding one state: x is charged
// 2, evicted by another key, charged 3 afresh a µs later; the refund of
// its first receipt leaves the fresh count of 3.
func TestARefundFromBeforeAnEvictionRefundsNothingIntoTheFreshState(t *testing.T) {
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(10, time.Hour).Named("fw"),
		sluice.SlidingCounter(10, time.Hour).Named("sc"),
		sluice.SlidingLog(10, time.Hour).Named("sl"),
	} {
		t.Run(l.ID(), func(t *testing.T) {
			now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
			s := New(WithClock(func() time.Time { return now }), WithSweepInterval(0), WithMaxKeys(1), WithShards(1))
			defer s.Close()
			ctx := context.Background()
			st := make([]sluice.Status, 1)
			apply := func(key string, cost int64) {
				t.Helper()
				if err := s.Apply(ctx, []sluice.Check{{Key: key, Limit: l, Cost: cost}}, st); err != nil || !st[0].Allowed {
					t.Fatalf("%s cost %d: %v %+v", key, cost, err, st[0])
				}
			}
			apply("x", 2)
			receipt := st[0].Charged
			apply("other", 1) // evicts x
			now = now.Add(time.Microsecond)
			apply("x", 3)
			if st[0].Remaining != 7 {
				t.Fatalf("x not counted afresh: %+v", st[0])
			}
			if err := s.Refund(ctx, []sluice.Check{{Key: "x", Limit: l, Cost: 2}}, []int64{receipt}); err != nil {
				t.Fatal(err)
			}
			apply("x", 0)
			if st[0].Remaining != 7 {
				t.Errorf("%d remaining after a refund of a receipt from before the eviction, want 7", st[0].Remaining)
			}
		})
	}
}
