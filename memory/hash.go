package memory

import (
	"hash/maphash"
	"math/bits"
)

// keyHasher computes a key's identity (see hash) in one pass over its
// bytes, 16 at a time, in two lanes of seeded multiply-and-fold mixing, as
// wyhash does (the hash Go's runtime uses for maps where it has no AES):
// h1 comes from one lane and h2 from the other, each under its own random
// seeds, so the two are independent and neither can be predicted, so keys
// cannot be chosen to collide or to crowd one shard. One pass of 64-bit
// multiplications costs a third of maphash plus a second hash on short
// keys (IP addresses, user ids), which are most keys.
type keyHasher struct {
	seeds [8]uint64
}

func newKeyHasher() keyHasher {
	var k keyHasher
	seed := maphash.MakeSeed() // random, from the runtime's generator
	for i := range k.seeds {
		k.seeds[i] = maphash.Comparable(seed, i) | 1
	}
	return k
}

// fold multiplies a by b into 128 bits and folds the halves together.
func fold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// of returns key's identity: h1 has its low bit set (never zero), h2 only
// the bits of a tag that name a key (see entry).
func (k *keyHasher) of(key string) hash {
	s, n := key, uint64(len(key))
	x, y := k.seeds[0]^n, k.seeds[1]^n
	for len(s) > 16 {
		a, b := le64(s), le64(s[8:])
		x, y = fold(a^k.seeds[2], b^x), fold(a^k.seeds[3], b^y)
		s = s[16:]
	}
	var a, b uint64
	switch {
	case n > 16: // the last 16 bytes, overlapping those already mixed
		end := key[len(key)-16:]
		a, b = le64(end), le64(end[8:])
	case len(s) >= 8:
		a, b = le64(s), le64(s[len(s)-8:])
	case len(s) >= 4:
		a, b = le32(s), le32(s[len(s)-4:])
	case len(s) > 0: // 1 to 3 bytes: with the length, these three name them
		a = uint64(s[0])<<16 | uint64(s[len(s)/2])<<8 | uint64(s[len(s)-1])
	}
	x, y = fold(a^k.seeds[4], b^x), fold(a^k.seeds[5], b^y)
	return hash{fold(x, k.seeds[6]) | 1, fold(y, k.seeds[7])&idMask | tagMark}
}

// le64 returns the first 8 bytes of s as a little-endian integer.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// le32 returns the first 4 bytes of s as a little-endian integer.
func le32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}
