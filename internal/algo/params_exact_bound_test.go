package algo

import "testing"

// NewParams takes a bucket whose deepest debt is exactly 2^53 ticks, the
// most it counts exactly, and refuses one of more: 3 per 8192 µs is a unit
// of 8192 ticks, and a burst of 2^40 units is 2^53 ticks, refilled in
// 2^53/3 µs, below 2^52. A queue's max wait of 1 µs adds RQ = 3 ticks,
// past the bound.
func TestNewParamsTakesADebtOfExactly2p53(t *testing.T) {
	for _, kind := range []Kind{KindTokenBucket, KindLeakyBucket, KindGCRA} {
		p, ok := NewParams(kind, 3, 8192, 1<<40, 0)
		if !ok {
			t.Fatalf("%v: NewParams(q 3, w 8192, b 2^40) refused a debt of exactly 2^53 ticks", kind)
		}
		if got := p.limitTicks(); got != maxExact {
			t.Fatalf("%v: limit %d ticks, want 2^53", kind, got)
		}
	}
	if _, ok := NewParams(KindLeakyBucket, 3, 8192, 1<<40, 1); ok {
		t.Fatal("NewParams accepted a debt of 2^53 + 3 ticks")
	}
}
