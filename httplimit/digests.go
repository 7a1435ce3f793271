package httplimit

import (
	"crypto/subtle"
	"hash/maphash"
	"math/rand/v2"
	"strings"
	"sync/atomic"
)

// Bounds of the digest cache.
const (
	// minDigestBuckets and maxDigestBuckets bound its size: one bucket
	// (4 entries) per listed key, rounded up to a power of two, so that
	// few buckets are asked to hold more listed keys than entries (whose
	// keys would keep evicting each other).
	minDigestBuckets = 1 << 10
	maxDigestBuckets = 1 << 14
	// maxCachedKeyLen is the longest raw API key the cache keeps; longer
	// ones (rare: common key formats are under 128 bytes) are hashed on
	// every request.
	maxCachedKeyLen = 256
)

// digestCache remembers, for recently seen API keys, what they resolved to
// (the identity their SHA-256 names), so that a returning key skips the
// SHA-256 and the lookups. It is a fixed array of 4-entry buckets of hash tags and entry
// pointers; a key's bucket is chosen by a seeded hash of
// the raw key, and a new key takes an empty entry of its bucket or else
// replaces one at random (a fixed choice could make keys used in turn evict
// each other forever). Its size never grows: a flood of made-up keys only
// replaces entries, and a replaced key is hashed again on its next request.
// It holds at most 4 × maxDigestBuckets entries of at most about 500 bytes
// each (144 for the entry, about 100 for an unlisted key's store key, the
// raw key when it is longer than 40 bytes, at most 256): 2 MB for the
// smallest cache, about 33 MB for the largest, which takes 8,193 listed keys
// or more.
//
// The trade-off: the raw keys of recent clients stay in process memory, as
// each request's headers already are while it is served. They are never
// logged or exported, and never compared in variable time: a lookup compares
// a raw key only with entries whose seeded 64-bit hash equals the key's, in
// constant time (crypto/subtle's comparison).
//
// Entries are immutable once published and every slot is read and written
// atomically, so lookups take no lock; it is safe for concurrent use.
type digestCache struct {
	seed    maphash.Seed
	mask    uint64
	buckets []digestBucket
}

// digestBucket is four entries and their hashes (tag = hash|1, 0 = empty),
// read first so that a lookup follows only a matching entry's pointer.
// A tag and its pointer are not updated together: the tag only filters,
// the entry's own hash and raw key decide.
type digestBucket struct {
	tags    [4]atomic.Uint64
	entries [4]atomic.Pointer[digestEntry]
}

// digestEntry is what one raw API key resolved to. Its fields are written
// once, before the entry is published, and never again.
type digestEntry struct {
	hash uint64 // the seeded hash of the raw key
	n    int32  // the raw key's length
	// listed: id is a listed key's identity; otherwise only id.Subject is
	// set (the key is a client of its own) and the caller sets the plan.
	listed bool
	// expires is when the entry stops being believed, in µs since the Unix
	// epoch; 0: never (API keys). A verified token's entry expires with
	// its token, a refused token's soon (see tokens).
	expires int64
	// The raw key: in short when it fits (most key formats do: UUIDs, 32
	// or 40 characters), else a copy in long.
	short [40]byte
	id    Identity
	long  string
}

func newDigestCache(listed int) *digestCache {
	n := minDigestBuckets
	for n < listed && n < maxDigestBuckets {
		n *= 2
	}
	return digestCacheOf(n)
}

// digestCacheOf returns an empty cache of n buckets, a power of two.
func digestCacheOf(n int) *digestCache {
	return &digestCache{seed: maphash.MakeSeed(), mask: uint64(n - 1), buckets: make([]digestBucket, n)}
}

// hash returns the seeded hash of raw.
func (c *digestCache) hash(raw string) uint64 { return maphash.String(c.seed, raw) }

// get returns the entry of raw, whose hash is h, or nil.
func (c *digestCache) get(raw string, h uint64) *digestEntry {
	b := &c.buckets[h&c.mask]
	for i := range b.tags {
		if b.tags[i].Load() != h|1 {
			continue
		}
		if e := b.entries[i].Load(); e != nil && e.hash == h && e.is(raw) {
			return e
		}
	}
	return nil
}

// put remembers raw, whose hash is h, as resolving to id, and returns the
// entry it published.
func (c *digestCache) put(raw string, h uint64, listed bool, id Identity) *digestEntry {
	return c.putUntil(raw, h, listed, id, 0)
}

// putUntil is put of an entry that expires (see digestEntry.expires).
func (c *digestCache) putUntil(raw string, h uint64, listed bool, id Identity, expires int64) *digestEntry {
	e := newDigestEntry(raw, h, listed, id, expires)
	b := &c.buckets[h&c.mask]
	i := 0
	for i < len(b.entries) && !b.entries[i].CompareAndSwap(nil, e) {
		i++
	}
	if i == len(b.entries) {
		i = rand.IntN(len(b.entries))
		b.entries[i].Store(e)
	}
	b.tags[i].Store(h | 1)
	return e
}

// putAt puts an entry of raw in slot i of bucket b, whatever it held.
func (c *digestCache) putAt(b *digestBucket, i int, raw string, h uint64, listed bool, id Identity, expires int64) *digestEntry {
	e := newDigestEntry(raw, h, listed, id, expires)
	b.entries[i].Store(e)
	b.tags[i].Store(h | 1)
	return e
}

func newDigestEntry(raw string, h uint64, listed bool, id Identity, expires int64) *digestEntry {
	e := &digestEntry{hash: h, listed: listed, id: id, n: int32(len(raw)), expires: expires}
	if len(raw) <= len(e.short) {
		copy(e.short[:], raw)
	} else {
		e.long = strings.Clone(raw)
	}
	return e
}

// putRefusal puts an unlisted entry of raw that expires at expires, unless
// its bucket is full of listed entries not yet expired at now: a flood of
// refusals never pushes out what was found listed, and then returns nil.
func (c *digestCache) putRefusal(raw string, h uint64, expires, now int64) *digestEntry {
	b := &c.buckets[h&c.mask]
	for i := range b.entries {
		if e := b.entries[i].Load(); e == nil || !e.listed || now >= e.expires {
			return c.putAt(b, i, raw, h, false, Identity{}, expires)
		}
	}
	return nil
}

// is reports, in constant time for a given length, whether e is raw's.
func (e *digestEntry) is(raw string) bool {
	if int(e.n) != len(raw) {
		return false
	}
	var v byte
	if len(raw) <= len(e.short) {
		s := e.short[:len(raw)]
		for i := range s {
			v |= s[i] ^ raw[i]
		}
	} else {
		return equalInConstantTime(e.long, raw)
	}
	return subtle.ConstantTimeByteEq(v, 0) == 1
}

// equalInConstantTime reports whether a and b, of one length, are equal,
// in a time that depends on their length alone: eight bytes at a time,
// then the rest one by one.
func equalInConstantTime(a, b string) bool {
	var v uint64
	i := 0
	for ; i+8 <= len(a) && i+8 <= len(b); i += 8 {
		v |= word(a[i:]) ^ word(b[i:])
	}
	for ; i < len(a) && i < len(b); i++ {
		v |= uint64(a[i] ^ b[i])
	}
	return v == 0
}

// word returns the first eight bytes of s as a little-endian number.
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
