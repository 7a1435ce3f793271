package sim

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Bounds on what one simulation may generate or replay, so that a request
// from the web cannot exhaust memory.
const (
	// DefaultMaxArrivals is the most arrivals Generate and ReadCSV accept
	// when not told otherwise: about 240 MB of trace.
	DefaultMaxArrivals = 10_000_000
	// MaxKeys is the most distinct keys a trace may have.
	MaxKeys = 10_000_000
	// maxSpan is the longest trace: 10 years.
	maxSpan = 10 * 365 * 24 * time.Hour
)

// Generate returns the traffic p describes (defaults applied with
// WithDefaults) for a limit of quantity per window, starting at 0 µs since
// sluice.Epoch, which is aligned to every window. The same p (including
// p.Seed) always gives the same trace, whose key i is named "key-i"; a
// pattern of more keys than requests holds only the keys that sent traffic.
// It refuses a pattern whose expected
// number of arrivals is above maxArrivals (≤ 0 means DefaultMaxArrivals),
// or that draws more than 10% above it, with a *TooLargeError.
func Generate(p Pattern, quantity int64, window time.Duration, maxArrivals int) (*Trace, error) {
	return generateFor(context.Background(), p, rate{q: quantity, w: window}, maxArrivals)
}

// generateFor is Generate for a rate, which may be a calendar quota: its
// boundary bursts are then at the starts of its calendar periods. It stops
// with ctx's error once ctx is done, within drawsPerCheck draws.
func generateFor(ctx context.Context, p Pattern, lim rate, maxArrivals int) (*Trace, error) {
	quantity, window := lim.q, lim.w
	if quantity < 1 || window < time.Microsecond {
		return nil, fmt.Errorf("pattern for a limit of %d per %v: need a positive quantity and window", quantity, window)
	}
	p = p.WithDefaults(quantity, window)
	if err := p.check(lim, maxArrivals); err != nil {
		return nil, err
	}
	if maxArrivals <= 0 {
		maxArrivals = DefaultMaxArrivals
	}
	tr := &Trace{
		Source: "pattern " + p.Name,
		End:    int64(p.Duration.D() / time.Microsecond),
	}
	r := rand.New(rand.NewPCG(p.Seed, p.Seed^0x5eed_51c3))
	pick := keyPicker(r, p.Keys, p.Skew)
	limit := maxArrivals + maxArrivals/10 + 1000 // Poisson noise above the expectation
	var err error
	tr.Arrivals, err = poisson(ctx, r, &p, pick, tr.End, limit)
	if err != nil {
		return nil, err
	}
	if p.Name == PatternBoundaryBurst {
		bursts := boundaryBursts(&p, lim, tr.End)
		if len(bursts) == 0 {
			return nil, fmt.Errorf("pattern %s: a duration of %v has no window boundary to burst across: use at least one window plus the spread (%v)",
				p.Name, p.Duration, FormatDuration(window+p.Spread.D()))
		}
		if len(tr.Arrivals)+len(bursts) > limit {
			return nil, fmt.Errorf("pattern %s: %w", p.Name, tooManyRequests(maxArrivals, 0))
		}
		tr.Arrivals = append(tr.Arrivals, bursts...)
		slices.SortStableFunc(tr.Arrivals, func(a, b Arrival) int { return cmp.Compare(a.At, b.At) })
	}
	tr.Keys = nameKeys(tr.Arrivals, p.Keys)
	return tr, nil
}

// nameKeys names the keys of arrivals drawn from keys keys: key i is
// "key-i". When there are more keys than arrivals only those that sent
// traffic are named, and arrivals renumbered to index them (in the order of
// i), so that a trace never holds more keys than arrivals: every replay
// keeps a state per key, and a pattern of millions of keys and few requests
// would otherwise take gigabytes to replay a handful.
func nameKeys(arr []Arrival, keys int) []string {
	if keys <= len(arr) {
		names := make([]string, keys)
		for i := range names {
			names[i] = fmt.Sprintf("key-%d", i)
		}
		return names
	}
	ids := make([]int32, len(arr))
	for i := range arr {
		ids[i] = arr[i].Key
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for i := range arr {
		k, _ := slices.BinarySearch(ids, arr[i].Key)
		arr[i].Key = int32(k)
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = fmt.Sprintf("key-%d", id)
	}
	return names
}

// check validates p (defaults applied) for a limit of rate r and refuses
// it with a *TooLargeError when its expected number of arrivals is above
// maxArrivals (≤ 0 means DefaultMaxArrivals), without generating anything.
func (p *Pattern) check(r rate, maxArrivals int) error {
	if r.q < 1 || r.w < time.Microsecond {
		return fmt.Errorf("pattern for a limit of %d per %v: need a positive quantity and window", r.q, r.w)
	}
	if err := p.validate(); err != nil {
		return err
	}
	if maxArrivals <= 0 {
		maxArrivals = DefaultMaxArrivals
	}
	if n := p.expected(r); n > float64(maxArrivals) {
		var size int64 // beyond an int64, the size is left unstated
		if n < 1<<63 {
			size = int64(n)
		}
		return fmt.Errorf("pattern %s: %w", p.Name, tooManyRequests(maxArrivals, size))
	}
	return nil
}

// tooManyRequests is the error of traffic above bound requests (size: the
// expected requests, 0 when unknown).
func tooManyRequests(bound int, size int64) *TooLargeError {
	return &TooLargeError{Bound: "requests", Max: int64(bound), Size: size, Hint: "lower the rate, keys or duration"}
}

// keyPicker returns a function drawing key indexes: Zipf of exponent skew
// when skew > 1, uniform otherwise.
func keyPicker(r *rand.Rand, keys int, skew float64) func() int32 {
	if keys == 1 {
		return func() int32 { return 0 }
	}
	if skew > 1 {
		z := rand.NewZipf(r, skew, 1, uint64(keys-1))
		return func() int32 { return int32(z.Uint64()) }
	}
	return func() int32 { return int32(r.IntN(keys)) }
}

// drawsPerCheck is how many arrivals poisson draws between two looks at
// its context: a few milliseconds of work.
const drawsPerCheck = 1 << 16

// poisson generates arrivals of rate p.Rate·p.Keys·m(t) per second over
// [0, end) µs by thinning a homogeneous process at the peak rate. A spike
// whose thinning would draw more candidates than limit (a factor far above
// its share of the time) is drawn piece by piece instead, each piece at its
// own rate, so that the work stays within limit whatever the factor.
//
// It stops with ctx's error once ctx is done, looking every drawsPerCheck
// draws.
func poisson(ctx context.Context, r *rand.Rand, p *Pattern, pick func() int32, end int64, limit int) ([]Arrival, error) {
	m, peak, mean := p.multiplier()
	total := p.Rate * float64(p.Keys)
	if total == 0 || peak == 0 {
		return nil, nil
	}
	lambda := total * peak // per second
	out := make([]Arrival, 0, int(min(total*mean*float64(end)/1e6*1.01+16, float64(limit))))
	if (p.Name == PatternSpike || p.Name == PatternRetryStorm) && lambda*float64(end)/1e6 > float64(limit) {
		return spikePieces(ctx, r, p, pick, end, limit, out)
	}
	for t, draws := r.ExpFloat64()/lambda, 1; ; t, draws = t+r.ExpFloat64()/lambda, draws+1 {
		if draws%drawsPerCheck == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		at := int64(t * 1e6)
		if at >= end {
			return out, nil
		}
		if peak != 1 && r.Float64()*peak >= m(t) {
			continue
		}
		if len(out) >= limit {
			return nil, fmt.Errorf("pattern %s: %w", p.Name, tooManyRequests(limit, 0))
		}
		out = append(out, Arrival{At: at, Key: pick(), Cost: p.Cost})
	}
}

// spikePieces appends to out the arrivals of a spike pattern over [0, end)
// µs drawn as three homogeneous Poisson processes: before the spike, in
// it (SpikeFactor times the rate) and after it.
func spikePieces(ctx context.Context, r *rand.Rand, p *Pattern, pick func() int32, end int64, limit int, out []Arrival) ([]Arrival, error) {
	from := min(int64(p.SpikeAt.D()/time.Microsecond), end)
	to := min(int64(p.spikeEnd().D()/time.Microsecond), end)
	total := p.Rate * float64(p.Keys)
	for _, piece := range [3]struct {
		from, to int64
		rate     float64
	}{{0, from, total}, {from, to, total * p.SpikeFactor}, {to, end, total}} {
		if piece.rate == 0 || piece.from >= piece.to {
			continue
		}
		for t, draws := float64(piece.from)/1e6+r.ExpFloat64()/piece.rate, 1; ; t, draws = t+r.ExpFloat64()/piece.rate, draws+1 {
			if draws%drawsPerCheck == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			at := max(int64(t*1e6), piece.from)
			if at >= piece.to {
				break
			}
			if len(out) >= limit {
				return nil, fmt.Errorf("pattern %s: %w", p.Name, tooManyRequests(limit, 0))
			}
			out = append(out, Arrival{At: at, Key: pick(), Cost: p.Cost})
		}
	}
	return out, nil
}

// boundaryBursts returns p.BurstSize arrivals per key evenly spaced in
// [b-spread, b) and as many in [b, b+spread), for every boundary b of r's
// windows that it bursts across (rate.boundaries: an odd multiple of the
// window, or the start of every other calendar period) such that the
// second half ends before end.
func boundaryBursts(p *Pattern, r rate, end int64) []Arrival {
	spread := max(int64(p.Spread.D()/time.Microsecond), 1)
	n := p.BurstSize
	var out []Arrival
	for _, b := range r.boundaries(end) {
		if b+spread > end {
			break
		}
		for _, from := range [2]int64{max(b-spread, 0), b} {
			span := min(spread, b) // the first half cannot start before 0
			if from == b {
				span = spread
			}
			for i := range n {
				at := from + int64(math.Floor(float64(i)*float64(span)/float64(n)))
				for k := range p.Keys {
					out = append(out, Arrival{At: at, Key: int32(k), Cost: p.Cost})
				}
			}
		}
	}
	return out
}
