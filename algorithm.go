package sluice

import "fmt"

// Algorithm names a rate-limiting algorithm. Every algorithm is exact integer
// arithmetic over microseconds; they differ in what they promise and in how
// much state they keep per key.
//
// The zero Algorithm is invalid.
type Algorithm uint8

const (
	// AlgorithmFixedWindow counts units in windows of length W aligned to
	// Epoch and admits at most Q per window. Two adjacent windows can admit 2Q
	// within any span of length W (the boundary burst). State: 16 bytes.
	AlgorithmFixedWindow Algorithm = iota + 1

	// AlgorithmSlidingLog remembers every admitted unit's time and admits at
	// most Q in any half-open span (t-W, t]. Exact, with state proportional to
	// Q: 16 bytes per distinct admission time still inside the window.
	AlgorithmSlidingLog

	// AlgorithmSlidingCounter is Cloudflare's sliding window counter: the
	// previous aligned window's count weighted by the share of it still inside
	// (t-W, t], rounded down, plus the current window's count, must stay ≤ Q.
	// At most Q per aligned window; an estimate of the sliding log otherwise.
	// State: 24 bytes.
	AlgorithmSlidingCounter

	// AlgorithmTokenBucket holds up to Burst tokens (default Q), starts full,
	// and refills continuously at Q per W. A check of cost c takes c tokens.
	// In any span of length d at most Burst + ⌊d·Q/W⌋ units are admitted.
	// State: 16 bytes (when the bucket is full again, in µs and its
	// fraction, as AlgorithmGCRA's), so that tokens spent stay spent, as
	// refill time, when the limit's parameters change.
	AlgorithmTokenBucket

	// AlgorithmLeakyBucket is the leaky bucket. As a meter (MaxWait 0) it is
	// a bucket of depth Burst draining at Q per W, and a check that would
	// overflow it is refused: the same decisions as AlgorithmTokenBucket. As a
	// queue (MaxWait > 0) a check that does not fit yet is admitted with a
	// Delay, the time until it fits, as long as that delay is ≤ MaxWait: the
	// delayed work then runs at exactly the drain rate. State: 16 bytes.
	AlgorithmLeakyBucket

	// AlgorithmGCRA is the generic cell rate algorithm: a token bucket kept as
	// one theoretical arrival time. It decides exactly like
	// AlgorithmTokenBucket, which keeps the same state; on a clock that goes
	// backwards both count the step as time not yet elapsed. State: 16 bytes
	// (arrival time in µs and its fraction, so that rates like 3 per second
	// stay exact).
	AlgorithmGCRA

	// AlgorithmConcurrency limits work in flight rather than a rate: at most
	// Quantity units held at once per key. A check takes a lease (the
	// Status's Lease stamp) that Limiter.Release gives back when the work
	// ends; a lease not given back expires after Window, so that the
	// capacity of a crashed instance returns by itself. Its bookkeeping is
	// the sliding window log's, with Window as the lease time. In
	// RateLimit-Policy it is a quota of qu="concurrent-requests".
	AlgorithmConcurrency
)

var algorithmNames = [...]string{
	AlgorithmFixedWindow:    "fixed-window",
	AlgorithmSlidingLog:     "sliding-window-log",
	AlgorithmSlidingCounter: "sliding-window-counter",
	AlgorithmTokenBucket:    "token-bucket",
	AlgorithmLeakyBucket:    "leaky-bucket",
	AlgorithmGCRA:           "gcra",
	AlgorithmConcurrency:    "concurrency",
}

// Algorithms lists the six rate algorithms, in declaration order
// (AlgorithmConcurrency, which limits work in flight, is not among them).
func Algorithms() []Algorithm {
	return []Algorithm{AlgorithmFixedWindow, AlgorithmSlidingLog, AlgorithmSlidingCounter,
		AlgorithmTokenBucket, AlgorithmLeakyBucket, AlgorithmGCRA}
}

// String returns the algorithm's configuration name, e.g. "token-bucket".
func (a Algorithm) String() string {
	if a.valid() {
		return algorithmNames[a]
	}
	return fmt.Sprintf("algorithm(%d)", uint8(a))
}

// valid reports whether a is one of the declared algorithms.
func (a Algorithm) valid() bool { return a >= AlgorithmFixedWindow && a <= AlgorithmConcurrency }

// bucket reports whether a is one of the bucket family (token bucket, leaky
// bucket, GCRA), which take a Burst.
func (a Algorithm) bucket() bool {
	return a == AlgorithmTokenBucket || a == AlgorithmLeakyBucket || a == AlgorithmGCRA
}

// ParseAlgorithm returns the Algorithm named s: one of the names String
// returns, or the short forms "sliding-log" and "sliding-counter".
func ParseAlgorithm(s string) (Algorithm, error) {
	switch s {
	case "sliding-log":
		return AlgorithmSlidingLog, nil
	case "sliding-counter":
		return AlgorithmSlidingCounter, nil
	}
	for _, a := range append(Algorithms(), AlgorithmConcurrency) {
		if algorithmNames[a] == s {
			return a, nil
		}
	}
	return 0, fmt.Errorf("unknown algorithm %q (use fixed-window, sliding-window-log, sliding-window-counter, token-bucket, leaky-bucket, gcra or concurrency)", s)
}
