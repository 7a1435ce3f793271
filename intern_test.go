package sluice

import (
	"runtime"
	"testing"
	"time"
)

// Limits built apart from the same parameters are equal (== and as map
// keys), as when a Limit held them by value; any parameter apart makes
// them differ.
func TestLimitsOfEqualParametersAreEqual(t *testing.T) {
	a := TokenBucket(5, time.Second).WithBurst(10).Named("api")
	b := NewLimit(AlgorithmTokenBucket, 5, time.Second).Named("api").WithBurst(10)
	if a != b {
		t.Fatalf("%v != %v", a, b)
	}
	m := map[Limit]int{a: 1}
	if m[b] != 1 {
		t.Fatalf("map[%v] misses an equal limit", b)
	}
	for _, c := range []Limit{
		a.Named("web"), a.WithBurst(11), a.WithShadow(true), TokenBucket(6, time.Second).WithBurst(10).Named("api"),
		TokenBucket(5, 2*time.Second).WithBurst(10).Named("api"), GCRA(5, time.Second).WithBurst(10).Named("api"),
	} {
		if c == a {
			t.Errorf("%v == %v", c, a)
		}
	}
	if a.WithShadow(true).WithShadow(false) != a {
		t.Errorf("shadow on and off again: not the limit it was")
	}
	if (Limit{}) == a || (Limit{}) != (Limit{}) {
		t.Errorf("the zero Limit compares wrong")
	}
}

// A Limit no longer held leaves specs.
func TestLimitsNoLongerHeldAreForgotten(t *testing.T) {
	count := func() int {
		specs.mu.Lock()
		defer specs.mu.Unlock()
		return len(specs.m)
	}
	keep := PerMinute(7)
	before := count()
	for q := range int64(1000) {
		_ = GCRA(q+1, 17*time.Second).Err()
	}
	for range 50 {
		if count() <= before {
			break
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := count(); n > before {
		t.Errorf("%d limits held after building 1000 and dropping them, want at most %d", n, before)
	}
	if keep != PerMinute(7) {
		t.Errorf("a limit still held lost its spec")
	}
}
