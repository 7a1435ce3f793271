package sluice

import (
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice/internal/algo"
)

func TestPerInstanceShares(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name      string
		limit     Limit
		n         int64
		quantity  int64         // of the share
		window    time.Duration // of the share
		burst     int64
		sameAsOld bool
	}{
		{name: "one instance keeps the limit as it is", limit: PerSecond(10), n: 1, sameAsOld: true},
		{name: "a fixed window admits the quantity divided, rounded down",
			limit: FixedWindow(10, time.Minute), n: 3, quantity: 3, window: time.Minute, burst: 3},
		{name: "a window algorithm admits at least one",
			limit: SlidingLog(2, time.Second), n: 3, quantity: 1, window: time.Second, burst: 1},
		{name: "a sliding counter keeps its window",
			limit: SlidingCounter(100, time.Hour), n: 4, quantity: 25, window: time.Hour, burst: 25},
		{name: "a bucket refills at exactly a third of the rate, in lowest terms",
			limit: GCRA(10, time.Second), n: 3, quantity: 1, window: 300 * time.Millisecond, burst: 3},
		{name: "a bucket's explicit burst is divided too",
			limit: TokenBucket(10, time.Second).WithBurst(20), n: 4, quantity: 1, window: 400 * time.Millisecond, burst: 5},
		{name: "a bucket holds at least one",
			limit: TokenBucket(5, time.Second).WithBurst(2), n: 3, quantity: 1, window: 600 * time.Millisecond, burst: 1},
		{name: "a million a day over three instances stays exact",
			limit: TokenBucket(1_000_000, day), n: 3, quantity: 1, window: 3 * day / 1_000_000, burst: 333333},
		{name: "a rate too slow for MaxWindow is rounded down to at least one",
			limit: GCRA(7, day), n: 1000, quantity: 2, window: 407 * day, burst: 1},
		{name: "instances are clamped to 65536",
			limit: GCRA(1<<20, time.Second), n: 1 << 30, quantity: 16, window: time.Second, burst: 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.limit.perInstance(tt.n)
			if err := s.Err(); err != nil {
				t.Fatalf("share %v is invalid: %v", s, err)
			}
			if tt.sameAsOld {
				if s != tt.limit {
					t.Fatalf("share %v, want the limit itself %v", s, tt.limit)
				}
				return
			}
			if s.Name() != tt.limit.Name() || s.Algorithm() != tt.limit.Algorithm() || s.Shadow() != tt.limit.Shadow() ||
				s.MaxWait() != tt.limit.MaxWait() {
				t.Errorf("share %v does not keep name, algorithm, shadow and max wait of %v", s, tt.limit)
			}
			if s.Burst() != tt.burst {
				t.Errorf("burst %d, want %d", s.Burst(), tt.burst)
			}
			if s.Quantity() != tt.quantity || s.Window() != tt.window {
				t.Errorf("share %d per %v, want %d per %v", s.Quantity(), s.Window(), tt.quantity, tt.window)
			}
		})
	}
}

func TestPerInstanceKeepsShadowAndMaxWait(t *testing.T) {
	l := LeakyBucket(100, time.Second).WithMaxWait(250 * time.Millisecond).WithShadow(true).Named("api-queue")
	s := l.perInstance(4)
	if s.Err() != nil || s.Name() != "api-queue" || !s.Shadow() || s.MaxWait() != 250*time.Millisecond || s.Burst() != 25 {
		t.Fatalf("share %v (err %v) of %v", s, s.Err(), l)
	}
}

// For any valid limit and instance count the share is valid, keeps what
// identifies the limit, holds ⌊B/n⌋ (at least 1), and never admits more than
// its part of the rate, which is exact whenever it can be.
func TestPropertyPerInstanceShare(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		alg := rapid.SampledFrom(Algorithms()).Draw(rt, "alg")
		q := rapid.OneOf(rapid.Int64Range(1, 100), rapid.Int64Range(1, MaxQuantity)).Draw(rt, "q")
		w := rapid.OneOf(
			rapid.SampledFrom([]int64{1, 1000, 1e6, 60e6, 3600e6, 86400e6}),
			rapid.Int64Range(1, int64(MaxWindow/time.Microsecond)),
		).Draw(rt, "w")
		l := NewLimit(alg, q, time.Duration(w)*time.Microsecond)
		if l.alg.bucket() && rapid.Bool().Draw(rt, "burst") {
			l = l.WithBurst(rapid.Int64Range(1, MaxQuantity).Draw(rt, "b"))
		}
		if alg == AlgorithmLeakyBucket && rapid.Bool().Draw(rt, "queue") {
			l = l.WithMaxWait(time.Duration(rapid.Int64Range(1, int64(MaxWindow/time.Microsecond)).Draw(rt, "maxWait")) * time.Microsecond)
		}
		l = l.WithShadow(rapid.Bool().Draw(rt, "shadow")).Named("lim")
		if l.Err() != nil {
			rt.Skip("invalid limit")
		}
		n := rapid.OneOf(rapid.Int64Range(2, 16), rapid.Int64Range(2, maxInstances)).Draw(rt, "n")
		s := l.perInstance(n)
		if err := s.Err(); err != nil {
			rt.Fatalf("share of %v over %d is invalid: %v", l, n, err)
		}
		if s.Name() != l.Name() || s.Algorithm() != l.Algorithm() || s.Shadow() != l.Shadow() || s.MaxWait() != l.MaxWait() {
			rt.Fatalf("share %v does not keep name, algorithm, shadow and max wait of %v", s, l)
		}
		lastResort := s.Quantity() == 1 && s.Window() == l.Window() && s.Burst() == 1
		if want := max(l.Burst()/n, 1); s.Burst() != want && !lastResort {
			rt.Fatalf("share %v of %v over %d: burst %d, want %d", s, l, n, s.Burst(), want)
		}
		// rate(share) ≤ rate(l)/n unless rounded up to the minimum of one.
		sq, sw := big.NewInt(s.Quantity()), big.NewInt(int64(s.Window()/time.Microsecond))
		lhs := new(big.Int).Mul(new(big.Int).Mul(sq, big.NewInt(n)), big.NewInt(w))
		rhs := new(big.Int).Mul(big.NewInt(q), sw)
		if lhs.Cmp(rhs) > 0 && s.Quantity() != 1 {
			rt.Fatalf("share %v of %v over %d admits more than its part", s, l, n)
		}
		if l.alg.bucket() && n*w/algo.GCD(q, n*w) <= int64(MaxWindow/time.Microsecond) && lhs.Cmp(rhs) != 0 {
			rt.Fatalf("share %v of %v over %d: rate not exact", s, l, n)
		}
	})
}
