package sim

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// Names of the built-in traffic patterns.
const (
	// PatternSteady is Poisson arrivals at Rate per key.
	PatternSteady = "steady"
	// PatternBoundaryBurst sends BurstSize requests per key just before a
	// window boundary and BurstSize more just after it, at every odd
	// multiple of the window (W, 3W, 5W, …): the traffic that lets a fixed
	// window admit twice its limit within one window's span. Rate adds
	// Poisson background traffic (none by default).
	PatternBoundaryBurst = "boundary-burst"
	// PatternSpike is steady traffic that jumps to SpikeFactor × Rate for
	// SpikeLength from SpikeAt.
	PatternSpike = "spike"
	// PatternDiurnal is Poisson traffic whose rate follows a sine wave of
	// Period: Rate × (1 - Amplitude·cos(2πt/Period)), lowest at the start
	// and highest half a period in.
	PatternDiurnal = "diurnal"
	// PatternRetryStorm is spike traffic whose refused clients retry under
	// Retry: half of them at once (after Retry.Gap), the others after the
	// Retry-After they were given, up to Retry.Max times.
	PatternRetryStorm = "retry-storm"
	// PatternManyKeys is steady traffic over many keys (1000 by default)
	// whose popularity follows a Zipf law of exponent Skew: a few hot keys
	// take most of the traffic.
	PatternManyKeys = "many-keys"
)

// Patterns lists the built-in pattern names.
func Patterns() []string {
	return []string{PatternSteady, PatternBoundaryBurst, PatternSpike, PatternDiurnal, PatternRetryStorm, PatternManyKeys}
}

// A Pattern describes generated traffic. It is JSON-able, so a web request
// can carry it. A zero field takes its default, which depends on the limit
// the traffic is meant for (quantity Q per window W): see WithDefaults.
type Pattern struct {
	// Name is one of Patterns().
	Name string `json:"name"`
	// Keys is the number of distinct keys (clients). Default 1; many-keys 1000.
	Keys int `json:"keys,omitempty"`
	// Rate is the mean requests per second per key: all keys together send
	// Rate × Keys per second (their shares follow Skew). Default
	// 1.2·Q/(W·Cost), requests spending 20% more units than the limit
	// admits; many-keys 0.5·Q/(W·Cost) (most keys under the limit, the
	// hottest far over it); boundary-burst: no background traffic.
	Rate float64 `json:"rate,omitempty"`
	// Duration is how long the traffic lasts. Default 10 windows, at most
	// 10 years.
	Duration Duration `json:"duration,omitempty"`
	// Cost is the units each request spends, at most sluice.MaxQuantity.
	// Default 1.
	Cost int64 `json:"cost,omitempty"`
	// Seed makes the traffic reproducible: the same pattern and seed give
	// the same trace. Zero is a valid seed.
	Seed uint64 `json:"seed,omitempty"`

	// BurstSize is the requests per key on each side of a boundary
	// (boundary-burst). Default ⌈Q/Cost⌉: a full window's worth.
	BurstSize int64 `json:"burst_size,omitempty"`
	// Spread is how long each half of a boundary burst lasts; its requests
	// are evenly spaced in it. Default W/100.
	Spread Duration `json:"spread,omitempty"`

	// SpikeAt is when the spike starts, from the start (spike,
	// retry-storm). Default Duration/3.
	SpikeAt Duration `json:"spike_at,omitempty"`
	// SpikeLength is how long the spike lasts. Default one window.
	SpikeLength Duration `json:"spike_length,omitempty"`
	// SpikeFactor multiplies Rate during the spike. Default 10.
	SpikeFactor float64 `json:"spike_factor,omitempty"`

	// Period is the diurnal cycle's length. Default Duration (one cycle).
	Period Duration `json:"period,omitempty"`
	// Amplitude in (0, 1] is how far the diurnal rate swings around Rate.
	// Default 0.8 (from 0.2 to 1.8 × Rate).
	Amplitude float64 `json:"amplitude,omitempty"`

	// Skew is the Zipf exponent of key popularity: key i gets a share
	// proportional to 1/(i+1)^Skew. Values ≤ 1 mean uniform. Default 1.1
	// for many-keys, uniform otherwise.
	Skew float64 `json:"skew,omitempty"`

	// Retry is how refused clients retry. Applied to every pattern when
	// Retry.Max > 0; retry-storm defaults it to DefaultRetryStorm.
	Retry RetryPolicy `json:"retry,omitzero"`
}

// WithDefaults returns p with every zero field set to its default for a
// limit of quantity per window. It does not validate p.
func (p Pattern) WithDefaults(quantity int64, window time.Duration) Pattern {
	w := window
	if p.Keys == 0 {
		p.Keys = 1
		if p.Name == PatternManyKeys {
			p.Keys = 1000
		}
	}
	if p.Cost == 0 {
		p.Cost = 1
	}
	if p.Rate == 0 && p.Name != PatternBoundaryBurst {
		p.Rate = 1.2 * float64(quantity) / w.Seconds()
		if p.Name == PatternManyKeys { // most keys under the limit, the hot few over
			p.Rate = 0.5 * float64(quantity) / w.Seconds()
		}
		if p.Cost > 1 { // in units, as the limit counts them
			p.Rate /= float64(p.Cost)
		}
	}
	if p.Duration == 0 {
		p.Duration = Duration(min(10*w, maxSpan))
	}
	if p.BurstSize == 0 {
		p.BurstSize = (quantity + p.Cost - 1) / p.Cost
	}
	if p.Spread == 0 {
		p.Spread = Duration(max(w/100, time.Microsecond))
	}
	if p.SpikeAt == 0 {
		p.SpikeAt = p.Duration / 3
	}
	if p.SpikeLength == 0 {
		p.SpikeLength = Duration(w)
	}
	if p.SpikeFactor == 0 {
		p.SpikeFactor = 10
	}
	if p.Period == 0 {
		p.Period = p.Duration
	}
	if p.Amplitude == 0 {
		p.Amplitude = 0.8
	}
	if p.Skew == 0 && p.Name == PatternManyKeys {
		p.Skew = 1.1
	}
	if p.Name == PatternRetryStorm && p.Retry == (RetryPolicy{}) {
		p.Retry = DefaultRetryStorm()
	}
	return p
}

// validate reports a pattern (with defaults applied) that cannot generate.
func (p *Pattern) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("pattern %s: %s", p.Name, fmt.Sprintf(format, args...))
	}
	known := false
	for _, n := range Patterns() {
		known = known || n == p.Name
	}
	switch {
	case !known:
		return fmt.Errorf("unknown pattern %q (use %s)", p.Name, strings.Join(Patterns(), ", "))
	case p.Keys < 1 || p.Keys > MaxKeys:
		return bad("keys %d must be in [1, %d]", p.Keys, MaxKeys)
	case p.Rate < 0 || math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0):
		return bad("rate %v must be ≥ 0 requests per second", p.Rate)
	case p.Duration <= 0 || p.Duration.D() > maxSpan:
		return bad("duration %v must be in (0, %v]", p.Duration, maxSpan)
	case p.Cost < 0 || p.Cost > sluice.MaxQuantity:
		return bad("cost %d must be in [0, %d]", p.Cost, int64(sluice.MaxQuantity))
	case p.BurstSize < 1:
		return bad("burst size %d must be ≥ 1", p.BurstSize)
	case p.Spread <= 0:
		return bad("spread %v must be positive", p.Spread)
	case p.SpikeAt < 0 || p.SpikeLength < 0:
		return bad("spike start %v and length %v must be ≥ 0", p.SpikeAt, p.SpikeLength)
	case (p.Name == PatternSpike || p.Name == PatternRetryStorm) && p.SpikeAt >= p.Duration:
		return bad("a spike at %v is not within the %v of traffic: start it earlier or make the duration longer", p.SpikeAt, p.Duration)
	case p.SpikeFactor < 0 || math.IsNaN(p.SpikeFactor) || math.IsInf(p.SpikeFactor, 0):
		return bad("spike factor %v must be ≥ 0", p.SpikeFactor)
	case p.Period <= 0:
		return bad("period %v must be positive", p.Period)
	case !(p.Amplitude > 0 && p.Amplitude <= 1):
		return bad("amplitude %v must be in (0, 1]", p.Amplitude)
	case p.Skew < 0 || math.IsNaN(p.Skew) || math.IsInf(p.Skew, 0):
		return bad("skew %v must be ≥ 0", p.Skew)
	}
	if p.Rate == 0 && p.Name != PatternBoundaryBurst {
		return bad("rate must be positive")
	}
	return p.Retry.validate()
}

// spikeEnd returns when the spike ends: SpikeAt + SpikeLength, or the end
// of the traffic when the spike lasts longer (SpikeAt and SpikeLength ≥ 0,
// as validate requires; the sum never overflows).
func (p *Pattern) spikeEnd() Duration {
	if p.SpikeLength >= p.Duration-min(p.SpikeAt, p.Duration) {
		return max(p.Duration, p.SpikeAt)
	}
	return p.SpikeAt + p.SpikeLength
}

// multiplier returns the rate factor m(t) at offset t seconds, and its
// largest value over the pattern, for the Poisson patterns.
func (p *Pattern) multiplier() (m func(t float64) float64, peak, mean float64) {
	switch p.Name {
	case PatternSpike, PatternRetryStorm:
		from, to := p.SpikeAt.D().Seconds(), p.spikeEnd().D().Seconds()
		in := max(min(to, p.Duration.D().Seconds())-from, 0) / p.Duration.D().Seconds()
		return func(t float64) float64 {
			if t >= from && t < to {
				return p.SpikeFactor
			}
			return 1
		}, max(p.SpikeFactor, 1), 1 + (p.SpikeFactor-1)*in
	case PatternDiurnal:
		period, a := p.Period.D().Seconds(), p.Amplitude
		return func(t float64) float64 {
			return 1 - a*math.Cos(2*math.Pi*t/period)
		}, 1 + a, 1
	}
	return func(float64) float64 { return 1 }, 1, 1
}

// expected returns the number of arrivals p generates on average for a
// limit of rate r.
func (p *Pattern) expected(r rate) float64 {
	if p.Name == PatternBoundaryBurst {
		boundaries := math.Ceil(float64(p.Duration.D()/r.w) / 2)
		if r.calendar() {
			boundaries = float64(len(r.boundaries(int64(p.Duration.D() / time.Microsecond))))
		}
		return 2*boundaries*float64(p.BurstSize)*float64(p.Keys) +
			p.Rate*float64(p.Keys)*p.Duration.D().Seconds()
	}
	_, _, mean := p.multiplier()
	return p.Rate * float64(p.Keys) * p.Duration.D().Seconds() * mean
}
