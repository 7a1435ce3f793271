package bench

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// NumKeys is the number of distinct keys every benchmark walks.
const NumKeys = 1 << 16

// benchKeys are precomputed once, so building them is never measured.
var benchKeys = Keys(NumKeys)

// BenchmarkAllow measures one admission decision for an existing key, per
// peer, under b.RunParallel: each goroutine walks all 65,536 keys from its
// own offset with its own odd stride (so it visits every key), spending one
// unit per request. Every key is created before the timer starts, from a
// copy of the key string.
//
// refused/op reports the fraction of requests refused; it should be 0, so
// that every peer does the same work.
//
// The plan3- sub-benchmarks decide a plan of three limits per request
// (PlanPeers): sluice in one atomic call, every other library with three
// limiters checked in turn.
//
// floor and floor-locked are no peers. floor is the least work any
// keyed limiter must do per decision (see floorTable); floor-locked adds
// what a store that spends several limits in one atomic call must (see
// lockedFloorTable). Measured in the same loop, they show what this machine
// allows at all.
func BenchmarkAllow(b *testing.B) {
	for _, p := range Peers {
		b.Run(p.Name, func(b *testing.B) { benchAllow(b, p) })
	}
	b.Run("floor", benchFloor)
	b.Run("floor-locked", benchLockedFloor)
	for _, p := range PlanPeers {
		b.Run(p.Name, func(b *testing.B) { benchAllow(b, p) })
	}
}

func benchAllow(b *testing.B, p Peer) {
	inst := p.New(Config{MaxKeys: 1 << 20, Period: time.Second})
	warm := inst.Worker()
	for _, k := range benchKeys {
		// A copy, as in a server where the key a limiter keeps came from an
		// earlier request: a peer that keeps the caller's string must not
		// find it already in cache when comparing keys.
		warm(strings.Clone(k))
	}
	runtime.GC() // start every peer from a collected heap
	var (
		gid     atomic.Uint64
		refused atomic.Int64
	)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := gid.Add(1)
		allow := inst.Worker()
		const mask = NumKeys - 1
		i := (id * 20011) & mask
		stride := (40503 + 2*id) & mask // odd: a full cycle over the keys
		var no int64
		for pb.Next() {
			if !allow(benchKeys[i]) {
				no++
			}
			i = (i + stride) & mask
		}
		refused.Add(no)
	})
	b.StopTimer()
	b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/op")
	inst.Close()
}

// TestPeersAdmit checks that every peer admits a fresh key, counts it and
// refuses once its burst is spent, so the benchmarks compare limiters that
// really limit.
func TestPeersAdmit(t *testing.T) {
	for _, p := range append(Peers[:len(Peers):len(Peers)], PlanPeers...) {
		t.Run(p.Name, func(t *testing.T) {
			// Window-based peers may refill their whole burst if a window
			// boundary falls inside the loop: allow a retry for that.
			var admitted int
			for attempt := 0; attempt < 3; attempt++ {
				inst := p.New(Config{MaxKeys: 1 << 10, Period: time.Second})
				allow := inst.Worker()
				admitted = 0
				for range 2 * Rate {
					if allow("k") {
						admitted++
					}
				}
				fresh := allow("other")
				inst.Close()
				if !fresh {
					t.Fatalf("%s refused a fresh key", p.Name)
				}
				// A few units may refill while the loop runs.
				if admitted >= Rate-1 && admitted <= Rate+Rate/10 {
					return
				}
			}
			t.Fatalf("%s admitted %d of %d requests with burst %d", p.Name, admitted, 2*Rate, Rate)
		})
	}
}

// TestHeapPerKey checks that the heap measurement runs for every peer (on few
// keys; cmd/report measures 1,000,000 in a fresh process per peer).
func TestHeapPerKey(t *testing.T) {
	for _, p := range Peers {
		if b := HeapPerKey(p, 20_000); b <= 0 {
			t.Errorf("%s: %.1f heap bytes per key", p.Name, b)
		} else {
			t.Logf("%s: %.1f heap bytes per key (20,000 keys)", p.Name, b)
		}
	}
}

// BenchmarkHotKey decides for one key again and again on one goroutine:
// every state and key byte stays in the first-level cache, so it measures
// the work a decision does, without the cache misses of BenchmarkAllow.
// After its first Rate requests the key is refused (refused/op shows it),
// so this is the path of a hot key over its limit: for sluice's default
// clock, one that reads the exact time (see memory.WithClockResolution).
// Run it with -cpu 1; the report does not.
func BenchmarkHotKey(b *testing.B) {
	key := benchKeys[7]
	hot := func(b *testing.B, allow func(string) bool) {
		allow(key)
		var refused int
		b.ReportAllocs()
		for b.Loop() {
			if !allow(key) {
				refused++
			}
		}
		b.ReportMetric(float64(refused)/float64(b.N), "refused/op")
	}
	for _, name := range []string{"sluice-gcra", "sluice-tokenbucket", "sethvargo"} {
		p, _ := PeerByName(name)
		b.Run(name, func(b *testing.B) {
			inst := p.New(Config{MaxKeys: 1 << 10, Period: time.Second})
			defer inst.Close()
			hot(b, inst.Worker())
		})
	}
	b.Run("floor", func(b *testing.B) {
		t := newFloorTable([]string{key})
		defer t.clock.close()
		hot(b, t.allow)
	})
	b.Run("floor-locked", func(b *testing.B) {
		t := newLockedFloorTable([]string{key})
		defer t.clock.close()
		hot(b, t.allow)
	})
}
