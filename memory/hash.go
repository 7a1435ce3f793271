package memory

import (
	"hash/maphash"
	"math/bits"
)

// keyHasher computes a key's identity (see hash): h1 with maphash (AES
// based on most platforms, seeded at random: keys cannot be chosen to
// collide), h2 with check, a cheaper seeded multiply-and-fold hash of the
// same bytes, independent of h1. h2 only has to make the rare key whose h1
// collides with a held key's tell itself apart; a second maphash pass would
// cost twice as much on short keys (IP addresses, user ids).
type keyHasher struct {
	seed  maphash.Seed
	check uint64 // check's seed
}

func newKeyHasher() keyHasher {
	return keyHasher{seed: maphash.MakeSeed(), check: maphash.Comparable(maphash.MakeSeed(), 0) | 1}
}

// of returns key's identity: h1 has its low bit set (never zero), h2 only
// the bits of a tag that name a key (see entry).
func (k *keyHasher) of(key string) hash {
	return hash{maphash.String(k.seed, key) | 1, checkHash(k.check, key)&idMask | tagMark}
}

// Multipliers of checkHash (odd, with well-spread bits: from splitmix64).
const (
	mixA = 0x9e3779b97f4a7c15
	mixB = 0xbf58476d1ce4e5b9
	mixC = 0x94d049bb133111eb
)

// fold multiplies a by b into 128 bits and folds the halves together.
func fold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// checkHash hashes s under seed, 8 bytes per multiplication. Its top bits,
// which h2 keeps, depend on every byte of s and on its length.
func checkHash(seed uint64, s string) uint64 {
	h := fold(seed^uint64(len(s)), mixA)
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = fold(h^w, mixB)
		s = s[8:]
	}
	var w uint64
	for i := range len(s) {
		w |= uint64(s[i]) << (8 * i)
	}
	return fold(fold(h^w, mixC), seed)
}
