package algo

import "testing"

// Edge cases of the bucket family: each pins a
// documented property that no other test of the package exercised.

// A token or leaky bucket state in the form earlier versions wrote (B = 0,
// A = ticks missing at T) is still read, and "a now before T counts as T"
// (bucket.go). Remaining is "the units available at once after the check",
// so after a clock step back a check of exactly what a peek shows remaining
// (filling the bucket to its brim, no overfill) is admitted without delay.
// Token bucket of 10 per 1000 µs, burst 10 (1 unit = 100 ticks, 1 tick per
// µs): 3 units missing at T = 1000, seen at 500.
func TestEarlierFormAfterAStepBackAdmitsWhatRemains(t *testing.T) {
	for _, kind := range []Kind{KindTokenBucket, KindLeakyBucket} {
		p, ok := NewParams(kind, 10, 1000, 10, 0)
		if !ok {
			t.Fatal("NewParams refused")
		}
		s := State{T: 1000, A: 300}
		var v Verdict
		peek := s
		Decide(&p, &peek, 500, 0, &v)
		if v.Remaining != 7 {
			t.Fatalf("kind %d: peek %+v, want 7 remaining", kind, v)
		}
		if !Decide(&p, &s, 500, v.Remaining, &v) || v.Delay != 0 || v.Remaining != 0 {
			t.Fatalf("kind %d: a check of the 7 remaining after a step back: %+v, want admitted at once with 0 remaining", kind, v)
		}
	}
}

// A bucket refills at Q per W: one whose earlier-form state was written
// about 73,000 years ago (T clamped to MinTime) is full now, whatever its
// rate — the refill must not be lost to an overflow of elapsed·RQ
// (levelLoad's horizon guard). 8 units per µs (RQ 8): 2^61 µs · 8 = 2^64.
func TestEarlierFormWrittenAgesAgoHasRefilled(t *testing.T) {
	for _, c := range []struct{ q, w, now int64 }{
		{8, 1, 0},                 // elapsed 2^61, RQ 8: 2^64
		{4, 1, MaxTime},           // elapsed 2^62, RQ 4: 2^64
		{3, 1, MaxTime - 1<<61/3}, // no wrap to 0, but past the horizon
	} {
		p, ok := NewParams(KindTokenBucket, c.q, c.w, c.q, 0)
		if !ok {
			t.Fatalf("NewParams(%d, %d) refused", c.q, c.w)
		}
		for _, t0 := range []int64{MinTime, -1 << 63} {
			s := State{T: t0, A: 5}
			var v Verdict
			Decide(&p, &s, c.now, 0, &v)
			if v.Remaining != c.q || v.Reset != 0 {
				t.Fatalf("Q %d/%d µs, state missing 5 ticks at %d, peeked at %d: %+v, want full (%d remaining, Reset 0)",
					c.q, c.w, t0, c.now, v, c.q)
			}
		}
	}
}

// A refused check's Retry is "the shortest wait ... after which the same
// check is allowed" (sluice.Status.RetryAfter), also for a leaky-bucket
// queue reading an earlier-form state after a clock step back, where the
// wait from now passes MaxWait although the wait from T does not. Queue of
// 10 per 1000 µs, burst 10, MaxWait 200 µs (1 unit = 100 ticks, 1 tick per
// µs): 9 units missing at T = 1000, seen at 500; a check of 2 overfills by
// 1 unit (100 µs) and would wait 600 µs from 500. It fits once its wait is
// 200 µs: at 900, not a µs earlier.
func TestQueueRetryAfterAStepBackIsTheShortestWait(t *testing.T) {
	p, ok := NewParams(KindLeakyBucket, 10, 1000, 10, 200)
	if !ok {
		t.Fatal("NewParams refused")
	}
	state := State{T: 1000, A: 900}
	const now = 500
	var v Verdict
	s := state
	if Decide(&p, &s, now, 2, &v) || v.Allowed {
		t.Fatalf("a check waiting 600 µs > MaxWait admitted: %+v", v)
	}
	retry := v.Retry
	if retry <= 0 {
		t.Fatalf("refused with Retry %d", retry)
	}
	s = state
	if Decide(&p, &s, now+retry-1, 2, &v) {
		t.Fatalf("Retry %d is not the shortest wait: admitted 1 µs earlier (%+v)", retry, v)
	}
	s = state
	if !Decide(&p, &s, now+retry, 2, &v) || v.Delay > p.MaxWait {
		t.Fatalf("refused at now + Retry (%d): %+v", retry, v)
	}
}
