package memory_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// The bound of WithMaxKeys is a bound on memory for sliding logs too: 16
// keys, each admitted 4,000 times on a sliding log of a million an hour,
// at a store of 512 (one shard), which holds at most 512 units of about
// 128 bytes (see WithMaxKeys). The heap it keeps may not pass twice that,
// 128 KB, where the logs' entries alone would be 16 × 4,000 × 16 bytes, a
// megabyte.
func TestTheBoundHoldsTheBytesOfSlidingLogs(t *testing.T) {
	const maxKeys, keys, admissions = 512, 16, 4000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	store, _, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(maxKeys), memory.WithSweepInterval(0))
	ctx := context.Background()
	l := sluice.SlidingLog(1_000_000, time.Hour)
	out := make([]sluice.Status, 1)
	admitted := 0
	for range admissions {
		for k := range keys {
			if err := store.Apply(ctx, []sluice.Check{{Key: fmt.Sprint("key-", k), Limit: l, Cost: 1}}, out); err != nil {
				t.Fatal(err)
			}
			if out[0].Allowed {
				admitted++
			}
		}
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	st := store.Stats()
	t.Logf("%d of %d admitted; the heap grew by %d bytes; %+v", admitted, keys*admissions, grown, st)
	if limit := int64(2 * maxKeys * 128); grown > limit {
		t.Errorf("the heap grew by %d bytes at a store of %d: above %d, twice what its bound holds", grown, maxKeys, limit)
	}
	runtime.KeepAlive(store)
}

// A sliding log (or a concurrency limit's lease book) that must grow past
// its room at a full shard, where every other state refuses, is refused
// for want of room (Stats.NoRoom), with the other checks of its call: the
// call changes nothing, and no refusing state is evicted. 20 keys each spend a log of 10 (3 units each: the
// state and 14 entries of room), so a store of 64 has room for a log of
// at most 30 entries beside them.
func TestALogThatMustGrowAmongRefusingStatesIsRefusedForRoom(t *testing.T) {
	for _, big := range []sluice.Limit{sluice.SlidingLog(1000, time.Hour).Named("big"), sluice.Concurrency(1000, time.Hour).Named("big")} {
		t.Run(big.Algorithm().String(), func(t *testing.T) { logRefusedForRoom(t, big) })
	}
}

func logRefusedForRoom(t *testing.T, big sluice.Limit) {
	store, lim, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(64), memory.WithSweepInterval(0))
	ctx := context.Background()
	small := sluice.SlidingLog(10, time.Hour).Named("small")
	for k := range 20 {
		for range 10 {
			if d, err := allow(lim, ctx, sluice.Check{Key: fmt.Sprint("full-", k), Limit: small, Cost: 1}); err != nil || !d.Allowed {
				t.Fatalf("full-%d: %v, allowed %v", k, err, d.Allowed)
			}
		}
	}
	admitted := 0
	var d sluice.Decision
	for admitted < 1000 {
		var err error
		if d, err = allow(lim, ctx, sluice.Check{Key: "big", Limit: big, Cost: 1}); err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			break
		}
		admitted++
	}
	st := store.Stats()
	if admitted > 30 || st.NoRoom != 1 {
		t.Fatalf("a log of 1,000 beside 20 refusing logs at a store of 64: %d admitted, %d refused for want of room; want at most 30, then 1", admitted, st.NoRoom)
	}
	if d.Statuses[0].RetryAfter <= 0 {
		t.Errorf("refused for want of room with RetryAfter %v", d.Statuses[0].RetryAfter)
	}
	if st.Evictions != 0 || st.Keys != 21 {
		t.Errorf("stats %+v: want no eviction, 21 states", st)
	}
	// With another check of a new state: refused, nothing changed.
	other := sluice.FixedWindow(5, time.Hour).Named("other")
	if d, err := allow(lim, ctx, sluice.Check{Key: "big", Limit: big, Cost: 1}, sluice.Check{Key: "big", Limit: other, Cost: 1}); err != nil || d.Allowed {
		t.Fatalf("the log with another check: %v, allowed %v", err, d.Allowed)
	}
	if d, _ := allow(lim, ctx, sluice.Check{Key: "big", Limit: big, Cost: 0}, sluice.Check{Key: "big", Limit: other, Cost: 0}); d.Statuses[0].Remaining != int64(1000-admitted) || d.Statuses[1].Remaining != 5 {
		t.Errorf("after the refused call: the log has %d left, the other limit %d; want %d and 5", d.Statuses[0].Remaining, d.Statuses[1].Remaining, 1000-admitted)
	}
	for k := range 20 {
		if d, _ := allow(lim, ctx, sluice.Check{Key: fmt.Sprint("full-", k), Limit: small, Cost: 0}); d.Statuses[0].Remaining != 0 {
			t.Errorf("full-%d has %d left: a refusing state was freed", k, d.Statuses[0].Remaining)
		}
	}
	// NoRoom counts the checks refused for want of room: both of that call's.
	if st := store.Stats(); st.NoRoom != 3 || st.Evictions != 0 || st.Keys != 21 {
		t.Errorf("stats %+v: want 3 checks refused for want of room, no eviction, 21 states", st)
	}
}

// A sliding log that grows past its room at a full shard makes that room
// as a new key does: it evicts states that admit (here each of 60 keys
// spent 1 of 100), never one of its own call's (its key spent 1 of 100
// too), and is admitted. Its log
// of 200 entries lies in room for 254 (1 + 32 units), so beside it the
// store of 64 holds at most 31 other states.
func TestALogThatGrowsEvictsStatesThatAdmit(t *testing.T) {
	store, lim, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(64), memory.WithSweepInterval(0))
	ctx := context.Background()
	used := sluice.FixedWindow(100, time.Hour).Named("used")
	for k := range 60 {
		if d, err := allow(lim, ctx, sluice.Check{Key: fmt.Sprint("used-", k), Limit: used, Cost: 1}); err != nil || !d.Allowed {
			t.Fatalf("used-%d: %v, allowed %v", k, err, d.Allowed)
		}
	}
	if d, err := allow(lim, ctx, sluice.Check{Key: "big", Limit: used, Cost: 1}); err != nil || !d.Allowed {
		t.Fatalf("big: %v, allowed %v", err, d.Allowed)
	}
	big := sluice.SlidingLog(1000, time.Hour).Named("big")
	for i := range 200 {
		d, err := allow(lim, ctx, sluice.Check{Key: "big", Limit: big, Cost: 1}, sluice.Check{Key: "big", Limit: used, Cost: 0})
		if err != nil || !d.Allowed {
			t.Fatalf("admission %d of the log: %v, allowed %v; %+v", i, err, d.Allowed, store.Stats())
		}
	}
	st := store.Stats()
	if st.Evictions == 0 || st.Keys > 32 || st.NoRoom != 0 {
		t.Errorf("stats %+v: want evictions, at most 32 states, none refused for want of room", st)
	}
	if d, _ := allow(lim, ctx, sluice.Check{Key: "big", Limit: big, Cost: 0}, sluice.Check{Key: "big", Limit: used, Cost: 0}); d.Statuses[0].Remaining != 800 || d.Statuses[1].Remaining != 99 {
		t.Errorf("the log has %d left, its key's other limit %d; want 800 and 99 (a state of the call is never evicted for it)", d.Statuses[0].Remaining, d.Statuses[1].Remaining)
	}
}

// A shadow sliding log that must grow past its room at a full shard of
// refusing states never refuses its call: its growth is not kept, and its
// check reports what an enforcing one would have, refused for want of
// room, nothing charged. Beside 20 spent logs (60 units) and its call's
// enforcing limit, a store of 64 has room for a log of 14 entries.
func TestAShadowLogWithoutRoomToGrowReportsNothingCounted(t *testing.T) {
	store, lim, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(64), memory.WithSweepInterval(0))
	ctx := context.Background()
	small := sluice.SlidingLog(10, time.Hour).Named("small")
	for k := range 20 {
		for range 10 {
			if d, err := allow(lim, ctx, sluice.Check{Key: fmt.Sprint("full-", k), Limit: small, Cost: 1}); err != nil || !d.Allowed {
				t.Fatalf("full-%d: %v, allowed %v", k, err, d.Allowed)
			}
		}
	}
	gate := sluice.FixedWindow(1000, time.Hour).Named("gate")
	trial := sluice.SlidingLog(1000, time.Hour).Named("trial").WithShadow(true)
	counted := 0
	for call := range 40 {
		d, err := allow(lim, ctx, sluice.Check{Key: "big", Limit: gate, Cost: 1}, sluice.Check{Key: "big", Limit: trial, Cost: 1})
		if err != nil || !d.Allowed {
			t.Fatalf("call %d: %v, admitted %v", call, err, d.Allowed)
		}
		if st := d.Statuses[1]; st.Allowed {
			counted++
		} else if st.Charged != 0 || st.RetryAfter <= 0 {
			t.Errorf("call %d: the shadow log's status %+v: want refused for want of room, nothing charged", call, st)
		}
	}
	d, _ := allow(lim, ctx, sluice.Check{Key: "big", Limit: gate, Cost: 0}, sluice.Check{Key: "big", Limit: trial, Cost: 0})
	st := store.Stats()
	if counted != 14 || d.Statuses[0].Remaining != 960 || d.Statuses[1].Remaining != 1000-14 || st.NoRoom != 26 || st.Evictions != 0 {
		t.Errorf("the shadow log counted %d of 40 (%d left), the gate has %d left; stats %+v; want 14 (986 left), 960, 26 refused for want of room, no eviction",
			counted, d.Statuses[1].Remaining, d.Statuses[0].Remaining, st)
	}
}

// A lease book that shrinks gives its units back: 200 leases held lie in
// room for 254 (1 + 32 units); as leases are given back, the book moves to
// twice its entries each time it falls to a quarter of its array (63
// leases to room for 126, 31 to 62, 15 to 30), so the 10 left of 200 lie
// in room for 30 (1 + 4).
func TestReleasedLeasesGiveTheirUnitsBack(t *testing.T) {
	store, lim, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(1024), memory.WithSweepInterval(0))
	ctx := context.Background()
	l := sluice.Concurrency(1000, time.Hour)
	c := sluice.Check{Key: "k", Limit: l, Cost: 1}
	var leases []int64
	for range 200 {
		d, err := allow(lim, ctx, c)
		if err != nil || !d.Allowed {
			t.Fatalf("%v, allowed %v", err, d.Allowed)
		}
		leases = append(leases, d.Statuses[0].Lease)
	}
	if st := store.Stats(); st.Keys != 1 || st.Units != 33 {
		t.Fatalf("200 leases held: %d states, %d units; want 1 and 33", st.Keys, st.Units)
	}
	for _, lease := range leases[:190] {
		if err := store.Release(ctx, []sluice.Check{c}, []int64{lease}); err != nil {
			t.Fatal(err)
		}
	}
	if st := store.Stats(); st.Keys != 1 || st.Units != 5 {
		t.Errorf("10 leases held: %d states, %d units; want 1 and 5", st.Keys, st.Units)
	}
}

// A log that slides through its window at a full shard of refusing states
// keeps its array: each admission, made as its oldest entry leaves the
// window, is shifted into the room the log has, never refused for want of
// room to grow. 62 spent fixed windows and a log of 6 entries a window in
// room for 6 (2 units) fill a store of 64.
func TestASlidingLogAtAFullShardKeepsItsRoom(t *testing.T) {
	store, lim, clock := newStore(t, memory.WithShards(1), memory.WithMaxKeys(64), memory.WithSweepInterval(0))
	ctx := context.Background()
	spent := sluice.FixedWindow(1, time.Hour).Named("spent")
	for k := range 62 {
		if d, err := allow(lim, ctx, sluice.Check{Key: fmt.Sprint("spent-", k), Limit: spent, Cost: 1}); err != nil || !d.Allowed {
			t.Fatalf("spent-%d: %v, allowed %v", k, err, d.Allowed)
		}
	}
	l := sluice.SlidingLog(1000, 550*time.Millisecond).Named("sliding")
	for i := range 100 {
		d, err := allow(lim, ctx, sluice.Check{Key: "sliding", Limit: l, Cost: 1})
		if err != nil || !d.Allowed {
			t.Fatalf("admission %d: %v, allowed %v; %+v", i, err, d.Allowed, store.Stats())
		}
		clock.Advance(100 * time.Millisecond)
	}
	if st := store.Stats(); st.Units > 64 || st.NoRoom != 0 || st.Evictions != 0 {
		t.Errorf("stats %+v: want at most 64 units, none refused, nothing evicted", st)
	}
}
