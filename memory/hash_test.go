package memory

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// The 29 bits of h2 that an entry keeps, and the bits of h1 that pick a
// shard, are spread like a random function's over keys that differ little
// (counters, IP addresses, keys that differ in length only, long keys that
// differ in their middle): about as many pairs collide as the birthday
// bound predicts, and the shards fill evenly.
func TestKeyHashSpreadsKeysThatDifferLittle(t *testing.T) {
	k := newKeyHasher()
	families := map[string]func(i int) string{
		"counter": func(i int) string { return fmt.Sprintf("key-%d", i) },
		"ipv4":    func(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255) },
		"zeros":   func(i int) string { return string(make([]byte, i%4096)) + fmt.Sprint(i/4096) },
		"apikey":  func(i int) string { return fmt.Sprintf("sk_live_%032x", i) },
		"middle":  func(i int) string { return fmt.Sprintf("tenant/%08d/user/0000000000000000000000000000", i) },
	}
	const n = 200_000
	// Pairs among n keys expected to share 29 bits: n(n-1)/2 / 2^29.
	expected := float64(n) * (n - 1) / 2 / (1 << 29)
	for name, key := range families {
		seen := make(map[uint64]int, n)
		h1s := make(map[uint64]bool, n)
		var shards [256]int
		pairs := 0
		for i := range n {
			h := k.of(key(i))
			pairs += seen[h.h2]
			seen[h.h2]++
			h1s[h.h1] = true
			shards[(h.h1>>1)&255]++
		}
		if float64(pairs) > 3*expected+10 {
			t.Errorf("%s: %d pairs of %d keys share h2, a random function gives about %.0f", name, pairs, n, expected)
		}
		if len(h1s) != n { // 64 bits: a collision among 2×10^5 keys has odds of 10^-9
			t.Errorf("%s: %d keys have only %d distinct h1", name, n, len(h1s))
		}
		// Chi-square over 256 shards, 255 degrees of freedom: above 400
		// has odds below 10^-7 for a random function.
		chi := 0.0
		for _, c := range shards {
			d := float64(c) - n/256.0
			chi += d * d / (n / 256.0)
		}
		if chi > 400 {
			t.Errorf("%s: shards filled unevenly (chi-square %.0f over 255 degrees of freedom)", name, chi)
		}
	}
}

// Both words of a key's identity depend on every byte and on the length:
// strings that differ in one byte or by one byte at the end get different
// h1 and different h2 (a random function collides here once in 2^29 cases).
func TestPropertyKeyIdentityTellsNearKeysApart(t *testing.T) {
	k := newKeyHasher()
	rapid.Check(t, func(rt *rapid.T) {
		s := rapid.StringN(0, 64, 1024).Draw(rt, "key")
		b := []byte(s)
		var other string
		if len(b) > 0 && rapid.Bool().Draw(rt, "flip") {
			i := rapid.IntRange(0, len(b)-1).Draw(rt, "at")
			b[i] ^= byte(rapid.IntRange(1, 255).Draw(rt, "bits"))
			other = string(b)
		} else {
			other = s + string(rune(rapid.IntRange(0, 127).Draw(rt, "extra")))
		}
		if a, o := k.of(s), k.of(other); a.h2 == o.h2 || a.h1 == o.h1 {
			rt.Fatalf("%q and %q share h1 %#x or h2 %#x", s, other, a.h1, a.h2)
		}
		if a := k.of(s); a.h1&1 != 1 || a.h2&^keyMask != 0 || a.h2&tagMark == 0 {
			rt.Fatalf("identity %v of %q breaks the tag layout", a, s)
		}
	})
}

// At every length around the hash's boundaries (the 4-, 8- and 16-byte
// reads, the 16-byte loop and its overlapping last block), changing any one
// byte changes both words of the identity, and so does adding a byte. (A
// random 29-bit h2 would collide here once in 2^29 comparisons; h1, 64 bits
// wide, is also checked across all the keys.)
func TestKeyHashReadsEveryByteAtEveryLength(t *testing.T) {
	k := newKeyHasher()
	h1s := map[uint64]string{}
	for n := 1; n <= 50; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		base := string(b)
		hb := k.of(base)
		variants := []string{base + "a"}
		for i := range n {
			v := []byte(base)
			v[i] ^= 0x5a
			variants = append(variants, string(v))
		}
		for _, v := range variants {
			if hv := k.of(v); hv.h1 == hb.h1 || hv.h2 == hb.h2 {
				t.Fatalf("%q and %q share a word of their identity", v, base)
			}
		}
		for _, v := range append(variants, base) {
			h1 := k.of(v).h1
			if other, dup := h1s[h1]; dup && other != v {
				t.Fatalf("%q and %q share h1", v, other)
			}
			h1s[h1] = v
		}
	}
}
