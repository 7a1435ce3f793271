package httplimit

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// digestIdentifier is the identifier of n keys "key-0" … "key-<n-1>" on
// the pro plan.
func digestIdentifier(t testing.TB, n int, unknownKeys string) *identifier {
	t.Helper()
	free := &Plan{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}}
	pro := &Plan{Name: "pro", Limits: []sluice.Limit{sluice.FixedWindow(50, time.Minute)}}
	o := Options{Plans: []*Plan{free, pro}, UnknownKeys: unknownKeys}
	for i := range n {
		o.Keys = append(o.Keys, Key{Name: fmt.Sprintf("k%d", i), SHA256: sha256.Sum256([]byte(fmt.Sprintf("key-%d", i))), Plan: pro})
	}
	return testIdentifier(t, o)
}

// testIdentifier returns the identifier a Middleware of o would use.
func testIdentifier(t testing.TB, o Options) *identifier {
	t.Helper()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	o = o.WithDefaults()
	return newIdentifier(&o, &Policy{Plans: o.Plans, Global: o.Global, DefaultPlan: o.DefaultPlan, AnonymousPlan: o.AnonymousPlan}, keyPrefix(o.Scope))
}

// uncached resolves raw as lookupKey does, without the cache.
func uncached(id *identifier, raw string, unlisted bool) (Identity, bool) {
	sum := sha256.Sum256([]byte(raw))
	if k := id.keys[sum]; k != nil {
		return *k, true
	}
	if unlisted {
		key, sub := id.keySubject(sum)
		return Identity{Kind: KindAPIKey, Subject: sub, key: key}, false
	}
	return Identity{}, false
}

func TestDigestCacheResolvesKeysAsHashingDoes(t *testing.T) {
	id := digestIdentifier(t, 100, "ip")
	keys := []string{"key-0", "key-99", "key-100", "", "k", strings.Repeat("x", 64), strings.Repeat("y", 65),
		strings.Repeat("z", maxCachedKeyLen), strings.Repeat("w", maxCachedKeyLen+1), "key-1\x00", "KEY-1"}
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("key-%d", i))
	}
	for round := range 3 { // the first resolves by hashing, the next from the cache
		for _, unlisted := range []bool{false, true} {
			for _, k := range keys {
				got, gotListed := id.lookupKey(k, unlisted)
				want, wantListed := uncached(id, k, unlisted)
				if got != want || gotListed != wantListed {
					t.Fatalf("round %d, unlisted %v: key %.20q resolved to %+v %v, want %+v %v", round, unlisted, k, got, gotListed, want, wantListed)
				}
			}
		}
	}
	if got, listed := id.lookupKey("key-7", false); !listed || got.KeyName != "k7" || got.Plan.Name != "pro" {
		t.Errorf("key-7 resolved to %+v", got)
	}
	// The decision API caches unlisted keys as clients of their own; the
	// middleware, whose unlisted keys are not (unknown_keys: ip), must still
	// see no identity in them.
	id.lookupKey("never-listed", true)
	if got, listed := id.lookupKey("never-listed", false); listed || got != (Identity{}) {
		t.Errorf("a cached unlisted key became an identity: %+v", got)
	}
}

// A flood of made-up keys replaces entries and nothing else: the cache
// holds no more entries than it has, the heap does not grow with the flood,
// and listed keys still resolve (by hashing again when they were evicted).
func TestDigestCacheStaysBoundedUnderAKeyFlood(t *testing.T) {
	id := digestIdentifier(t, 10, "key")
	flood := func(from, to int) {
		for i := from; i < to; i++ {
			if _, listed := id.lookupKey(fmt.Sprintf("flood-%d-%s", i, strings.Repeat("f", i%200)), true); listed {
				t.Errorf("flood key %d resolved as listed", i)
				return
			}
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		// Live bytes, not HeapInuse: the survivors of random eviction
		// are spread over many spans, each kept in use by a few of them,
		// so HeapInuse after a flood measured fragmentation and failed
		// 2-3 runs in 10 on a busy machine with the cache itself bounded.
		return m.HeapAlloc
	}
	slots := 4 * len(id.digests.buckets)
	flood(0, 2*slots) // fill it
	before := heap()
	flood(2*slots, 100*slots)
	after := heap()
	held := 0
	for i := range id.digests.buckets {
		for j := range id.digests.buckets[i].entries {
			if id.digests.buckets[i].entries[j].Load() != nil {
				held++
			}
		}
	}
	t.Logf("%d buckets, %d entries held after %d keys; live heap %.1f MB full, %.1f MB after the flood",
		len(id.digests.buckets), held, 100*slots, float64(before)/(1<<20), float64(after)/(1<<20))
	if held > slots {
		t.Errorf("%d entries held in %d slots", held, slots)
	}
	if after > before+4<<20 {
		t.Errorf("live heap grew from %.1f to %.1f MB during the flood", float64(before)/(1<<20), float64(after)/(1<<20))
	}
	for i := range 10 {
		if got, listed := id.lookupKey(fmt.Sprintf("key-%d", i), false); !listed || got.KeyName != fmt.Sprintf("k%d", i) {
			t.Errorf("key-%d resolved to %+v after the flood", i, got)
		}
	}
}

// Readers and writers of one small cache at once (run with -race): every
// lookup still resolves as hashing does.
func TestDigestCacheConcurrentLookups(t *testing.T) {
	id := digestIdentifier(t, 200, "key")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20_000 {
				k := fmt.Sprintf("key-%d", (i*7+g*13)%400) // half listed, half not
				got, listed := id.lookupKey(k, true)
				want, wantListed := uncached(id, k, true)
				if got != want || listed != wantListed {
					t.Errorf("%s resolved to %+v, want %+v", k, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// One bucket (4 entries) per listed key, rounded up to a power of two,
// within the bounds.
func TestDigestCacheSize(t *testing.T) {
	for _, tt := range []struct{ listed, buckets int }{
		{0, minDigestBuckets}, {minDigestBuckets, minDigestBuckets}, {minDigestBuckets + 1, 2 * minDigestBuckets},
		{10_000, 16384}, {1 << 30, maxDigestBuckets},
	} {
		if got := len(newDigestCache(tt.listed).buckets); got != tt.buckets {
			t.Errorf("%d listed keys: %d buckets, want %d", tt.listed, got, tt.buckets)
		}
	}
}

// equalInConstantTime tells every string from one that differs in any one
// byte, whatever its length and the byte's place (in the words of eight
// bytes or in the rest).
func TestEqualInConstantTime(t *testing.T) {
	for n := range 40 {
		a := make([]byte, n)
		for i := range a {
			a[i] = byte('a' + i%26)
		}
		if !equalInConstantTime(string(a), string(a)) {
			t.Fatalf("length %d: equal strings unequal", n)
		}
		for i := range n {
			for _, bit := range []byte{1, 0x80} {
				b := append([]byte(nil), a...)
				b[i] ^= bit
				if equalInConstantTime(string(a), string(b)) {
					t.Fatalf("length %d: a string differing at byte %d (bit %#x) equal", n, i, bit)
				}
			}
		}
	}
}
