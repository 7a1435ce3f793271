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
			return hash{rapid.Uint64Range(0, 40).Draw(rt, "h1")*2 + 1, rapid.Uint64Range(0, 3).Draw(rt, "h2") << 60}
		})
		for range rapid.IntRange(1, 300).Draw(rt, "ops") {
			h := genHash.Draw(rt, "key")
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0, 1: // upsert
				v := rapid.Int64().Draw(rt, "value")
				if _, slot, ok := tb.load(h); ok {
					tb.store(slot, sluice.State{A: v}, 0)
				} else {
					tb.insert(h, sluice.State{A: v}, 0)
				}
				want[h] = v
			case 2: // remove
				if _, slot, ok := tb.load(h); ok {
					tb.remove(slot)
				}
				delete(want, h)
			case 3:
				tb.compact()
			}
			if tb.n != len(want) {
				rt.Fatalf("table holds %d, map %d", tb.n, len(want))
			}
			for k, v := range want {
				st, _, ok := tb.load(k)
				if !ok || st.A != v {
					rt.Fatalf("key %v: got %v %v, want %d", k, st.A, ok, v)
				}
			}
		}
	})
}
