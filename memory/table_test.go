package memory

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
)

// The open-addressing table agrees with a map through any sequence of
// inserts, updates, removals (backward-shift deletion), growth and
// compaction, including hashes crowded into one probe run.
func TestPropertyTableAgreesWithAMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tb := newTable(sluice.PerSecond(10))
		want := map[hash]int64{}
		// Few distinct h2 values crowd keys into long probe runs.
		genHash := rapid.Custom(func(rt *rapid.T) hash {
			return hash{rapid.Uint64Range(0, 40).Draw(rt, "h1")*2 + 1, rapid.Uint64Range(0, 3).Draw(rt, "h2")<<60 | tagMark}
		})
		for range rapid.IntRange(1, 300).Draw(rt, "ops") {
			h := genHash.Draw(rt, "key")
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0, 1: // upsert
				v := rapid.Int64().Draw(rt, "value")
				if e, _, ok := tb.hold(h); ok {
					tb.store(e, h, &sluice.State{A: v}, 0)
					e.letGo()
				} else {
					tb.insert(h, &sluice.State{A: v}, 0)
				}
				want[h] = v
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
			for k, v := range want {
				e, _, ok := tb.hold(k)
				if !ok {
					rt.Fatalf("key %v: missing, want %d", k, v)
				}
				if e.a != v {
					rt.Fatalf("key %v: got %d, want %d", k, e.a, v)
				}
				e.letGo()
			}
		}
	})
}
