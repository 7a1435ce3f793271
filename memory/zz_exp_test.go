package memory

import "testing"

var sinkH hash

func BenchmarkExpHash(b *testing.B) {
	k := newKeyHasher()
	for _, key := range []string{"key-000123", "203.0.113.77", "sk_live_0123456789abcdef0123456789abcdef"} {
		b.Run("", func(b *testing.B) {
			for b.Loop() {
				sinkH = k.of(key)
			}
		})
	}
}
