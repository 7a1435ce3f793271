// Package algo holds sluice's rate-limiting algorithms as pure functions of
// integers: one Go implementation of each (fixed window, sliding log,
// sliding counter, the bucket family — token bucket, leaky bucket meter and
// queue, GCRA — and concurrency leases), over parameters and states of its
// own. It knows nothing of package sluice: sluice.Limit carries a Params
// built by its constructors and decides through Decide; redis/lua holds
// the same algorithms in Lua, each function naming its Go twin here, and
// internal/conformance keeps the two equal.
//
// Times are µs since sluice's epoch; every function accepts any state,
// including one written under other parameters of the same algorithm or
// by a clock that stepped back: out-of-range values are clamped, never
// trusted to create capacity.
package algo

import "errors"

// Kind names an algorithm. Its values are sluice.Algorithm's.
type Kind uint8

const (
	KindFixedWindow Kind = iota + 1
	KindSlidingLog
	KindSlidingCounter
	KindTokenBucket
	KindLeakyBucket
	KindGCRA
	KindConcurrency
)

// Bucket reports whether k is one of the bucket family (token bucket, leaky
// bucket, GCRA), which take a burst.
func (k Kind) Bucket() bool { return k == KindTokenBucket || k == KindLeakyBucket || k == KindGCRA }

// maxExact is the largest integer that float64 represents exactly: the
// bound on a bucket's ticks, so that Redis's Lua (whose numbers are
// doubles) computes what Go does.
const maxExact = 1 << 53

// maxHorizon bounds a bucket's Horizon, in µs: a wait is at most the
// Horizon from the time the state was written, which is below 2^52 µs
// (Lua's times, see redis/lua/arith.lua), so that waits measured from now
// stay below 2^53 µs, exact in Lua's doubles, also after the clock
// stepped back.
const maxHorizon = 1 << 52

// Params are one limit's parameters: at most Q units per W µs under Kind,
// with a capacity B. Build them with NewParams.
type Params struct {
	Kind    Kind
	Q       int64 // quantity per window
	W       int64 // window (or refill period), µs
	B       int64 // capacity: the burst of a bucket, Q for the others
	MaxWait int64 // µs a leaky-bucket queue may delay a check; 0: a meter
	// One unit is RW ticks; the buckets refill RQ ticks per µs. RQ/RW is
	// Q/W in lowest terms, so fractional rates stay exact.
	RQ, RW int64
	// Horizon is ⌊limit/RQ⌋+1 µs for the buckets (0 for the others), where
	// limit = B·RW + MaxWait·RQ ticks is the deepest admissible debt: a time
	// by which any admissible debt has refilled. NewParams keeps it ≤ 2^52.
	Horizon int64
	// Period, for a fixed window, makes its windows calendar periods
	// starting Offset µs after the UTC calendar's (see NewCalendarParams);
	// 0: windows of W µs aligned to the epoch.
	Period Period
	Offset int64
}

// ErrInexact is what a limit whose parameters NewParams refuses wraps: its
// bucket cannot be counted exactly in ticks, or refills its deepest debt
// too slowly for its waits to stay exact.
var ErrInexact = errors.New("cannot be kept exact")

// NewParams returns the parameters of kind for q units per w µs with
// capacity b (ignored but for the buckets: the others hold q) and a queue
// of maxWait µs (leaky bucket). The caller has checked the ranges: q and b
// in [1, 2^40], w in [1, 2^45] ([1, 2^46] for a fixed window) and maxWait
// in [0, 2^45]. It reports false when a bucket's deepest debt cannot be
// counted exactly in ticks (more than 2^53) or takes 2^52 µs (about 142
// years) or more to refill.
func NewParams(kind Kind, q, w, b, maxWait int64) (Params, bool) {
	if !kind.Bucket() {
		b, maxWait = q, 0
	}
	g := GCD(q, w)
	p := Params{Kind: kind, Q: q, W: w, B: b, MaxWait: maxWait, RQ: q / g, RW: w / g}
	if kind.Bucket() {
		if b > (maxExact-MulSat(maxWait, p.RQ))/p.RW {
			return Params{}, false
		}
		p.Horizon = p.limitTicks()/p.RQ + 1
		if p.Horizon > maxHorizon {
			return Params{}, false
		}
	}
	return p, true
}

// State is one key's state under one limit (sluice.State has the same
// fields, and what each means per algorithm). The zero State is a key never
// seen.
type State struct {
	T, A, B int64
	Log     []Entry
}

// Entry is one admission of a sliding log: Units admitted at At.
type Entry struct {
	At    int64 // µs
	Units int64
}

// Verdict is the outcome of one check, in integer µs.
type Verdict struct {
	Allowed   bool
	Remaining int64 // units available at once after the check
	Reset     int64 // µs until back at full capacity
	Retry     int64 // µs until the check fits (refused only); ≥ MaxTime: never
	Delay     int64 // µs an admitted check waits (leaky-bucket queue)
	Lease     int64 // the µs stamp of a concurrency lease taken, else 0
	// Charged is the µs time an admitted check's cost was counted at, for
	// Refund, under the algorithms Refundable reports; 0 otherwise.
	Charged int64
}

// Time bounds: the algorithms clamp now and stored times into
// [MinTime, MaxTime] (about ±73,000 years around the epoch), so neither
// adding a window nor the difference of two times ever overflows.
const (
	MaxTime = 1 << 61
	MinTime = -MaxTime
)

// ClampTime returns t clamped into [MinTime, MaxTime].
func ClampTime(t int64) int64 { return min(max(t, MinTime), MaxTime) }

// Decide spends cost units of p at now from state *s: it writes the
// outcome to *v and, when the check is admitted with a cost, the next state
// to *s, and reports whether it did. A refused check, and cost 0 (a peek,
// always allowed), leave *s as it was; a cost above p.B is refused with a
// Retry of MaxTime. Decide panics on parameters NewParams did not build.
//
// For the sliding log the new Log may share s.Log's backing array; its
// elements are never modified.
func Decide(p *Params, s *State, now, cost int64, v *Verdict) bool {
	switch p.Kind {
	case KindFixedWindow:
		return FixedWindow(p, s, now, cost, v)
	case KindSlidingLog, KindConcurrency:
		return SlidingLog(p, s, now, cost, v)
	case KindSlidingCounter:
		return SlidingCounter(p, s, now, cost, v)
	case KindTokenBucket, KindLeakyBucket, KindGCRA:
		if p.RQ != 0 {
			return Bucket(p, s, now, cost, v)
		}
	}
	panic("algo: Decide with parameters NewParams did not build")
}
