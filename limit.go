package sluice

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// Bounds on a Limit's parameters. Within them every algorithm's state and
// arithmetic are exact in 64-bit integers and in the doubles of Redis's Lua.
const (
	// MaxQuantity is the largest Quantity and Burst a Limit accepts.
	MaxQuantity = 1 << 40
	// MaxWindow is the longest Window (and MaxWait) a Limit accepts: 2^45 µs,
	// about 407 days. A fixed window may be up to MaxFixedWindow.
	MaxWindow = time.Duration(1<<45) * time.Microsecond
	// MaxFixedWindow is the longest Window of a fixed-window Limit: 2^46 µs,
	// about 814 days, twice MaxWindow. A fixed window's state is the time
	// of its last charge and a count, and deciding it takes a window's start and
	// end, never a product of the window with a quantity, so it stays exact
	// over longer windows than the other algorithms (whose arithmetic
	// multiplies a window by a quantity) allow.
	MaxFixedWindow = 2 * MaxWindow
)

// A Limit is one rule: at most Quantity units per Window under one Algorithm,
// with a Burst for the bucket algorithms. A Limit is an immutable value: the
// With methods return a modified copy. Build one with NewLimit, an algorithm
// constructor such as TokenBucket or GCRA, or PerSecond … PerDay:
//
//	sluice.PerMinute(100)                                   // GCRA, 100/min, burst 100
//	sluice.TokenBucket(5, time.Second).WithBurst(10)        // 5/s, up to 10 at once
//	sluice.SlidingLog(1000, 24*time.Hour).Named("per-day")
//
// A Limit with invalid parameters is still a value, but Err reports why and
// every Limiter call that uses it fails with an error wrapping ErrInvalidLimit.
// The zero Limit is invalid.
type Limit struct {
	name    string
	id      string // the state's identity when not name (see WithID)
	alg     Algorithm
	shadow  bool
	q       int64 // quantity per window
	w       int64 // window, µs
	burst   int64 // burst as given (0 = default)
	maxWait int64 // µs; leaky bucket queue mode when > 0
	period  Period
	off     int64 // µs: a calendar limit's offset
	// p is what the algorithm decides by, built by build (zero for an
	// invalid limit).
	p   algo.Params
	err error
}

// NewLimit returns a limit of quantity units per window under alg, named after
// its window ("per-second", "per-minute", "per-hour", "per-day", otherwise
// "per-" followed by the window, e.g. "per-10s"). The window must be a whole
// number of microseconds in [1µs, MaxWindow] ([1µs, MaxFixedWindow] for
// AlgorithmFixedWindow); the quantity in [1, MaxQuantity].
func NewLimit(alg Algorithm, quantity int64, window time.Duration) Limit {
	l := Limit{name: defaultName(window), alg: alg, q: quantity, w: int64(window / time.Microsecond)}
	if window%time.Microsecond != 0 {
		l.w = -1 // rejected by build with a clear message
	}
	return l.build()
}

// FixedWindow returns a fixed-window limit of quantity per window.
func FixedWindow(quantity int64, window time.Duration) Limit {
	return NewLimit(AlgorithmFixedWindow, quantity, window)
}

// SlidingLog returns an exact sliding-window-log limit of quantity per window.
func SlidingLog(quantity int64, window time.Duration) Limit {
	return NewLimit(AlgorithmSlidingLog, quantity, window)
}

// SlidingCounter returns a sliding-window-counter limit of quantity per window.
func SlidingCounter(quantity int64, window time.Duration) Limit {
	return NewLimit(AlgorithmSlidingCounter, quantity, window)
}

// TokenBucket returns a token bucket refilled at quantity per window, holding
// quantity tokens unless WithBurst says otherwise.
func TokenBucket(quantity int64, per time.Duration) Limit {
	return NewLimit(AlgorithmTokenBucket, quantity, per)
}

// LeakyBucket returns a leaky bucket draining at quantity per window, of depth
// quantity unless WithBurst says otherwise. It is a meter (refuses overflow)
// unless WithMaxWait turns it into a queue.
func LeakyBucket(quantity int64, per time.Duration) Limit {
	return NewLimit(AlgorithmLeakyBucket, quantity, per)
}

// Concurrency returns a limit of n units in flight at once per key; a lease
// not released expires after lease (see AlgorithmConcurrency). Its default
// name is "concurrent".
func Concurrency(n int64, lease time.Duration) Limit {
	return NewLimit(AlgorithmConcurrency, n, lease).Named("concurrent")
}

// GCRA returns a GCRA limit of quantity per window with burst quantity unless
// WithBurst says otherwise.
func GCRA(quantity int64, per time.Duration) Limit {
	return NewLimit(AlgorithmGCRA, quantity, per)
}

// PerSecond returns GCRA(n, time.Second): n per second, up to n at once.
func PerSecond(n int64) Limit { return GCRA(n, time.Second) }

// PerMinute returns GCRA(n, time.Minute), named "per-minute".
func PerMinute(n int64) Limit { return GCRA(n, time.Minute) }

// PerHour returns GCRA(n, time.Hour), named "per-hour".
func PerHour(n int64) Limit { return GCRA(n, time.Hour) }

// PerDay returns GCRA(n, 24*time.Hour), named "per-day".
func PerDay(n int64) Limit { return GCRA(n, 24*time.Hour) }

// Named returns a copy of l called name. Names are 1 to 64 characters from
// [A-Za-z0-9._-]: the same string appears in RateLimit headers, problem
// bodies, metric labels and store keys.
func (l Limit) Named(name string) Limit { l.name = name; return l.build() }

// WithBurst returns a copy of l whose bucket holds burst units (token bucket,
// leaky bucket, GCRA only). Zero restores the default, Quantity.
func (l Limit) WithBurst(burst int64) Limit { l.burst = burst; return l.build() }

// WithMaxWait returns a copy of l that queues instead of refusing: a check that
// does not fit now is admitted with a Delay of up to d (leaky bucket only).
// Zero makes it a meter again. d is truncated to whole microseconds.
func (l Limit) WithMaxWait(d time.Duration) Limit {
	l.maxWait = int64(d / time.Microsecond)
	return l.build()
}

// WithShadow returns a copy of l in shadow mode (on) or enforcing mode (off).
// A shadow limit is evaluated and reported but never refuses a request; it
// consumes quota only when it would itself have admitted the request.
func (l Limit) WithShadow(on bool) Limit { l.shadow = on; return l.build() }

// Name returns the limit's name, e.g. "per-minute".
func (l Limit) Name() string { return l.name }

// WithID returns a copy of l whose state a Store keeps under id instead of
// its name; "" restores the name. A Store keeps one state per (Check.Key,
// ID, Algorithm): limits that share all three share their state, whatever
// their other parameters (a state written under other parameters is
// clamped to this limit's, never trusted to create capacity). An ID lets a
// limit keep its clients' state when it is renamed; its Name stays what
// headers, bodies and metrics show. IDs follow the rules of names.
//
// The Redis store keeps one Redis key per (Check.Key, ID): a state it
// finds there under another algorithm it reads as absent and replaces.
// Two limits of different algorithms that one key meets in turn under one
// ID (two plans' "per-minute", a rolling change of a limit's algorithm)
// therefore start each other afresh on Redis, where the memory store keeps
// both: give limits of different algorithms different IDs.
func (l Limit) WithID(id string) Limit { l.id = id; return l.build() }

// ID returns the identity of the limit's state in a Store: the id of
// WithID, else its name.
func (l Limit) ID() string {
	if l.id != "" {
		return l.id
	}
	return l.name
}

// Algorithm returns the limit's algorithm.
func (l Limit) Algorithm() Algorithm { return l.alg }

// Quantity returns Q, the units admitted per Window.
func (l Limit) Quantity() int64 { return l.q }

// Window returns W, the window or refill period; for a calendar limit, the
// longest of its windows (see Calendar).
func (l Limit) Window() time.Duration { return time.Duration(l.w) * time.Microsecond }

// Burst returns the capacity: the most units one check can take, and the
// most that can be admitted at one instant. It is Quantity for the window
// algorithms and for buckets without WithBurst.
func (l Limit) Burst() int64 { return l.p.B }

// MaxWait returns how long a leaky-bucket queue may delay a check; zero for a
// meter and for every other algorithm.
func (l Limit) MaxWait() time.Duration { return time.Duration(l.maxWait) * time.Microsecond }

// Shadow reports whether l is in shadow mode.
func (l Limit) Shadow() bool { return l.shadow }

// Err reports why l is invalid, or nil. The error wraps ErrInvalidLimit.
func (l Limit) Err() error {
	if l.err == nil && l.q == 0 {
		return fmt.Errorf("%w: zero Limit (build one with NewLimit or an algorithm constructor)", ErrInvalidLimit)
	}
	return l.err
}

// String describes l, e.g. `per-minute: gcra 100 per 1m0s burst 100`.
func (l Limit) String() string {
	s := fmt.Sprintf("%s: %s %d per %v", l.name, l.alg, l.q, l.Window())
	if l.period != 0 {
		s = fmt.Sprintf("%s: %s %d per %v", l.name, l.alg, l.q, l.period)
	}
	if l.off != 0 {
		s += fmt.Sprintf(" offset %v", l.Offset())
	}
	if l.alg.bucket() {
		s += fmt.Sprintf(" burst %d", l.p.B)
	}
	if l.maxWait > 0 {
		s += fmt.Sprintf(" max-wait %v", l.MaxWait())
	}
	if l.shadow {
		s += " (shadow)"
	}
	return s
}

// build validates l and fills in its parameters.
func (l Limit) build() Limit {
	l.err, l.p = l.validate(), algo.Params{}
	if l.err != nil {
		return l
	}
	if l.period != 0 {
		l.p = algo.NewCalendarParams(l.q, algo.Period(l.period), l.off)
		return l
	}
	b := l.q
	if l.alg.bucket() && l.burst > 0 {
		b = l.burst
	}
	p, ok := algo.NewParams(algo.Kind(l.alg), l.q, l.w, b, l.maxWait)
	if !ok {
		// Bucket state is counted in ticks (one unit = w/gcd(q, w)
		// ticks); the deepest a queue can go must stay exact, and refill
		// within 2^52 µs so that every wait does.
		l.err = fmt.Errorf("%w: %s: %d per %v with burst %d %w "+
			"(a unit is %v/%d; burst × that exceeds 2^53 ticks, or takes 2^52 µs, about 142 years, to refill): "+
			"pick a quantity that divides the window more evenly, e.g. a round number, or a smaller burst",
			ErrInvalidLimit, l.name, l.q, l.Window(), b, algo.ErrInexact, l.Window(), l.q)
		return l
	}
	l.p = p
	return l
}

func (l Limit) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidLimit, l.name, fmt.Sprintf(format, args...))
	}
	switch {
	case !ValidName(l.name):
		return fmt.Errorf("%w: name %q must be 1-64 characters of A-Z a-z 0-9 . _ -", ErrInvalidLimit, l.name)
	case l.id != "" && !ValidName(l.id):
		return fmt.Errorf("%w: %s: id %q must be 1-64 characters of A-Z a-z 0-9 . _ -", ErrInvalidLimit, l.name, l.id)
	case !l.alg.valid():
		return bad("unknown algorithm %v", l.alg)
	case l.period != 0 && !l.period.valid():
		return bad("unknown calendar period %v", l.period)
	case l.q < 1 || l.q > MaxQuantity:
		return bad("quantity %d must be in [1, %d]", l.q, int64(MaxQuantity))
	case l.w < 1 || l.w > int64(l.alg.maxWindow()/time.Microsecond):
		return bad("window must be from 1µs to %v (%d days)", l.alg.maxWindow(), l.alg.maxWindow()/(24*time.Hour))
	case l.burst != 0 && !l.alg.bucket():
		return bad("burst applies only to token-bucket, leaky-bucket and gcra, not %v", l.alg)
	case l.burst < 0 || l.burst > MaxQuantity:
		return bad("burst %d must be in [1, %d]", l.burst, int64(MaxQuantity))
	case l.maxWait != 0 && l.alg != AlgorithmLeakyBucket:
		return bad("max wait applies only to leaky-bucket, not %v", l.alg)
	case l.maxWait < 0 || l.maxWait > int64(MaxWindow/time.Microsecond):
		return bad("max wait must be in [0, %v]", MaxWindow)
	}
	return l.validateCalendar()
}

// maxWindow is the longest window a limit of a accepts.
func (a Algorithm) maxWindow() time.Duration {
	if a == AlgorithmFixedWindow {
		return MaxFixedWindow
	}
	return MaxWindow
}

// ValidName reports whether s can name a limit: 1 to 64 characters of
// [A-Za-z0-9._-]. Names appear in headers, problem bodies, metric labels and
// store keys, so nothing else is accepted.
func ValidName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func defaultName(w time.Duration) string {
	switch w {
	case time.Second:
		return "per-second"
	case time.Minute:
		return "per-minute"
	case time.Hour:
		return "per-hour"
	case 24 * time.Hour:
		return "per-day"
	}
	if w > 0 && w%(24*time.Hour) == 0 {
		return fmt.Sprintf("per-%dd", w/(24*time.Hour))
	}
	s := w.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m" // 1m0s -> 1m; 1m30s stays
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h" // 2h0m -> 2h; 1h10m stays
	}
	name := "per-"
	for _, r := range s {
		switch {
		case r == 'µ':
			name += "u"
		case r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z':
			name += string(r)
		}
	}
	return name
}
