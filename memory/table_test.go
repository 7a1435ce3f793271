package memory

import (
	"testing"
	"time"
	"unsafe"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
)

// The open-addressing table agrees with a map through any sequence of
// inserts, updates, removals (backward-shift deletion), growth and
// compaction, including hashes crowded into one probe run, for every way a
// table keeps states (two words in the entry, a third beside it, a log), and
// leaves every entry it is done with unheld.
func TestPropertyTableAgreesWithAMap(t *testing.T) {
	limits := []sluice.Limit{
		sluice.TokenBucket(10, time.Second),    // kindTA
		sluice.GCRA(10, time.Second),           // kindTB
		sluice.SlidingCounter(10, time.Second), // kindTAB
		sluice.SlidingLog(10, time.Second),     // kindLog
	}
	rapid.Check(t, func(rt *rapid.T) {
		tb := newTable(rapid.SampledFrom(limits).Draw(rt, "limit"), nil)
		type kept struct {
			st  sluice.State
			exp int64
		}
		want := map[hash]kept{}
		// Few distinct h2 values crowd keys into long probe runs.
		genHash := rapid.Custom(func(rt *rapid.T) hash {
			return hash{rapid.Uint64Range(0, 40).Draw(rt, "h1")*2 + 1, rapid.Uint64Range(0, 3).Draw(rt, "h2")<<60 | tagMark}
		})
		for range rapid.IntRange(1, 300).Draw(rt, "ops") {
			h := genHash.Draw(rt, "key")
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0, 1: // upsert
				v := rapid.Int64().Draw(rt, "value")
				st := sluice.State{T: v, A: v ^ 1, B: v ^ 2}
				if tb.kind == kindLog {
					st = sluice.State{Log: []sluice.LogEntry{{At: v, Units: 1}}}
				}
				exp := rapid.Int64Range(-1e7, 1<<62).Draw(rt, "exp")
				if slot, _, ok := tb.hold(h); ok {
					tb.store(slot, h, &st, exp)
					tb.arr.es[slot].letGo()
				} else {
					tb.insert(h, &st, exp)
				}
				want[h] = kept{st, exp}
			case 2: // remove
				if slot, ok := find(tb.entries(), h); ok {
					tb.entries()[slot].hold()
					tb.remove(slot)
				}
				delete(want, h)
			case 3:
				tb.compact()
			}
			for i := range tb.entries() {
				e := &tb.entries()[i]
				if tag := e.tag.Load(); e.h1.Load() == 0 && tag != 0 || e.h1.Load() != 0 && tag&lockBits != lockFree {
					rt.Fatalf("slot %d left with tag %#x", i, tag)
				}
			}
			if tb.n != len(want) {
				rt.Fatalf("table holds %d, map %d", tb.n, len(want))
			}
			for k, w := range want {
				slot, _, ok := tb.hold(k)
				if !ok {
					rt.Fatalf("key %v: missing, want %+v", k, w.st)
				}
				var got sluice.State
				tb.load(slot, k, &got)
				if !sameWords(tb.kind, got, w.st) {
					rt.Fatalf("key %v: got %+v, want %+v", k, got, w.st)
				}
				// The expiry is kept in whole seconds, rounded up: never
				// earlier than asked, less than a second later.
				if exp := expiryOf(tb.entries()[slot].tag.Load()); exp < w.exp || w.exp < 4e15 && exp >= max(w.exp, 0)+1e6 {
					rt.Fatalf("key %v: expires at %d, asked %d", k, exp, w.exp)
				}
				tb.entries()[slot].letGo()
			}
		}
	})
}

// sameWords reports whether a and b agree in the words a table of kind keeps.
func sameWords(kind stateKind, a, b sluice.State) bool {
	switch kind {
	case kindTA:
		return a.T == b.T && a.A == b.A
	case kindTB:
		return a.T == b.T && a.B == b.B
	case kindTAB:
		return a.T == b.T && a.A == b.A && a.B == b.B
	}
	return len(a.Log) == len(b.Log) && (len(a.Log) == 0 || a.Log[0] == b.Log[0])
}

// A shard takes whole cache lines, so that two shards' mutexes never share
// one; a shard's listings start on a line, so that a decision finds its
// first table's key and array in one.
func TestShardFillsWholeCacheLines(t *testing.T) {
	if n := unsafe.Sizeof(shard{}); n%64 != 0 {
		t.Errorf("a shard is %d bytes, not a multiple of 64", n)
	}
	if n := unsafe.Sizeof(listings{}); n > 512 || n <= 448 {
		t.Errorf("listings are %d bytes: the allocator places only 449 to 512 at a multiple of 512 with no header", n)
	}
	keep := make([]*listings, 64)
	for i := range keep {
		keep[i] = new(listings)
		if at := uintptr(unsafe.Pointer(keep[i])); at%64 != 0 {
			t.Fatalf("listings at %#x, not on a cache line", at)
		}
	}
	if end := unsafe.Offsetof(listings{}.ls) + unsafe.Offsetof(listing{}.arr) + unsafe.Sizeof([]entry{}); end > 64 {
		t.Errorf("the first listing's key and entries end at byte %d, past the first line", end)
	}
}
