package memory

import (
	"fmt"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
)

// A shard agrees with a map of (key, limit) states through any sequence of
// inserts, updates, removals (backward-shift deletion), growth, widening
// and compaction, including hashes crowded into one probe run, for every
// way a state is kept (two words in a slot, three in two slots, a log
// beside the array, a state past maxWidth slots beside it), and leaves
// every entry it is done with unheld, expiring no earlier than its states.
func TestPropertyShardAgreesWithAMap(t *testing.T) {
	var limits []sluice.Limit
	for i, l := range []sluice.Limit{
		sluice.FixedWindow(10, time.Second),    // kindTA
		sluice.GCRA(10, time.Second),           // kindTB
		sluice.SlidingCounter(10, time.Second), // kindTAB
		sluice.SlidingLog(10, time.Second),     // kindLog
	} {
		for j := range 2 {
			limits = append(limits, l.Named(fmt.Sprintf("l%d-%d", i, j)))
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		s := New(WithShards(1), WithSweepInterval(0), WithMaxKeys(1<<20))
		defer s.Close()
		sh := &s.shards[0]
		type at struct {
			h hash
			l int
		}
		type kept struct {
			st  sluice.State
			exp int64
		}
		want := map[at]kept{}
		// Few distinct h2 values crowd keys into long probe runs.
		genHash := rapid.Custom(func(rt *rapid.T) hash {
			return hash{rapid.Uint64Range(0, 40).Draw(rt, "h1")*2 + 1, rapid.Uint64Range(0, 3).Draw(rt, "h2")<<60 | tagMark}
		})
		sh.mu.Lock()
		defer sh.mu.Unlock()
		for range rapid.IntRange(1, 300).Draw(rt, "ops") {
			k := at{genHash.Draw(rt, "key"), rapid.IntRange(0, len(limits)-1).Draw(rt, "limit")}
			lr := s.limits.note(&limits[k.l])
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0, 1: // upsert
				v := rapid.Int64().Draw(rt, "value")
				st := sluice.State{T: v, A: v ^ 1, B: v ^ 2}
				if lr.kind == kindLog {
					st = sluice.State{Log: []sluice.LogEntry{{At: v, Units: 1}}}
				}
				exp := rapid.Int64Range(-1e7, 1<<62).Draw(rt, "exp")
				if p, taken, ok := sh.locate(k.h, lr); ok {
					sh.store(p, k.h, lr, &st, exp, rapid.Bool().Draw(rt, "grow"))
					if taken {
						sh.arr.letGo(p.base)
					}
				} else {
					sh.insert(s, k.h, lr, &st, exp, 0, guard{}, true)
				}
				want[k] = kept{st, exp}
			case 2: // remove
				_, held := want[k]
				if got := sh.forget(k.h, lr); got != held {
					rt.Fatalf("forget %v = %v, held %v", k, got, held)
				}
				delete(want, k)
			case 3: // compact, forgetting nothing
				sh.sweep(s, math.MinInt64, true)
			}
			a := sh.arr
			for base := 0; base < len(a.w); base += a.stride {
				if tag := a.w[base+1]; a.w[base] == 0 && tag != 0 || a.w[base] != 0 && tag&lockBits != lockFree {
					rt.Fatalf("entry at %d left with tag %#x", base, tag)
				}
			}
			if sh.keys != len(want) {
				rt.Fatalf("shard holds %d states, map %d", sh.keys, len(want))
			}
			units := 0
			for _, ss := range sh.side {
				for i := range ss {
					units += logUnits(ss[i].room())
				}
			}
			if sh.logUnits != units {
				rt.Fatalf("shard counts %d units of logs' room, its logs' arrays hold %d", sh.logUnits, units)
			}
			for k, w := range want {
				lr := s.limits.find(&limits[k.l])
				p, taken, ok := sh.locate(k.h, lr)
				if !ok {
					rt.Fatalf("%v: missing, want %+v", k, w.st)
				}
				var got sluice.State
				sh.load(s, p, k.h, lr, &got)
				if !sameWords(lr.kind, got, w.st) {
					rt.Fatalf("%v: got %+v, want %+v", k, got, w.st)
				}
				// Expiries are kept in whole seconds, rounded up: never
				// earlier than asked, less than a second later; an entry's
				// is never earlier than its states'.
				var secs uint64
				if p.slot == sideSlot {
					secs = sh.side[k.h][sh.sideIndex(k.h, lr.ref)].secs
				} else {
					secs = a.slotSecs(p.slot)
				}
				if exp := secsExpiry(secs); exp < w.exp || w.exp < 4e15 && exp >= max(w.exp, 0)+1e6 {
					rt.Fatalf("%v: expires at %d, asked %d", k, exp, w.exp)
				}
				if tagSecs(a.w[p.base+1]) < secs {
					rt.Fatalf("%v: entry expires at %ds, its state at %ds", k, tagSecs(a.w[p.base+1]), secs)
				}
				if taken {
					a.letGo(p.base)
				}
			}
		}
	})
}

// sameWords reports whether a and b agree in the words a state of kind
// keeps.
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
