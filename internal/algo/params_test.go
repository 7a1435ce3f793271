package algo

import "testing"

// NewParams takes a bucket only while its deepest debt is below 2^53 ticks
// and refills in under 2^52 µs: a wait measured from a state written up to
// 2^52 µs ahead of now (a clock stepped back) then stays below 2^53 µs,
// exact in the doubles of Redis's Lua as in Go.
func TestNewParamsBoundsABucketsDebt(t *testing.T) {
	const w45 = 1 << 45
	for _, c := range []struct {
		name             string
		kind             Kind
		q, w, b, maxWait int64
		ok               bool
	}{
		{"a full bucket refilling in 2^52 - 2^45 µs", KindGCRA, 1, w45, 127, 0, true},
		{"a full bucket refilling in 2^52 µs", KindGCRA, 1, w45, 128, 0, false},
		{"a token bucket refilling in 2^52 - 2^20 µs", KindTokenBucket, 1, 1 << 20, 1<<32 - 1, 0, true},
		{"a token bucket refilling in 2^52 µs", KindTokenBucket, 1, 1 << 20, 1 << 32, 0, false},
		{"a token bucket of 2^53 - 2^31 ticks, one per µs", KindTokenBucket, 1, 1 << 31, 1<<22 - 1, 0, false},
		{"a queue whose max wait takes its debt to 2^52 - 1 µs", KindLeakyBucket, 1, w45, 127, w45 - 1, true},
		{"a queue whose max wait takes its debt to 2^52 µs", KindLeakyBucket, 1, w45, 127, w45, false},
		{"a burst of 2^40 refilling 3 a µs", KindGCRA, 3, 1, 1 << 40, 0, true},
		{"more than 2^53 ticks, refilling in a few µs", KindTokenBucket, 1 << 40, w45 - 1, 1 << 40, 0, false},
		{"a window's quantity is no debt", KindFixedWindow, 1, 1 << 46, 1 << 40, 0, true},
	} {
		p, ok := NewParams(c.kind, c.q, c.w, c.b, c.maxWait)
		if ok != c.ok {
			t.Errorf("%s: NewParams(%v, q %d, w %d, b %d, max wait %d) ok = %v, want %v (horizon %d µs)",
				c.name, c.kind, c.q, c.w, c.b, c.maxWait, ok, c.ok, p.Horizon)
		}
	}
}
