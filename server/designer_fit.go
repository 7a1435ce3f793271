package server

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/sim"
)

// The designer page sends a built-in pattern with no keys, rate or
// duration: each takes its default for the limit (sim.Pattern.
// WithDefaults), whose traffic grows with the limit's quantity and may be
// above the designer's bounds (many-keys at 100/1m is about 500,000
// requests). Such a pattern is fitted to the bounds rather than refused,
// as the page has no field to make it smaller: many-keys sends from fewer
// keys (at least fitMinKeys), then every pattern lasts fewer whole windows
// (at least fitMinWindows; a spike's start and length and a period the
// request sets are shortened alike), then the limit's quantity is made
// smaller (at least fitMinQuantity, a 1, 2 or 5 times a power of ten) and
// the traffic, whose rate and bursts are the defaults for the quantity,
// with it: the pattern keeps its shape against the limit, over fewer
// requests. A request that sets the keys, rate or duration itself asked
// for that size, and is refused above a bound.
const (
	fitMinKeys     = 10
	fitMinWindows  = 2
	fitMinQuantity = 10
	// fitMargin is the share of a bound a fitted pattern aims at: the
	// sizes are estimates.
	fitMargin = 0.9
	// fitTries bounds the fittings of one request, in fitToBounds and
	// again once its traffic is built (designer.simulate).
	fitTries = 6
)

// sizedByDefault reports whether req's traffic is a pattern whose size is
// all defaults: one the designer may fit to its bounds.
func sizedByDefault(req sim.Request) bool {
	p := req.Pattern
	return p != nil && req.Trace == "" && p.Keys == 0 && p.Rate == 0 && p.Duration == 0
}

// fitPattern returns req with its pattern made smaller by the ratio of the
// bound to the size in tl, and whether it could: false when the size is
// not known or the pattern would have fewer than fitMinKeys keys,
// fitMinWindows windows or a quantity below fitMinQuantity. The quantity is
// made smaller by the square root of what is left of the ratio for the
// bound of work, as a sliding window log's work grows with its requests
// times its entries. req's pattern must be sized by default, or by an
// earlier fitPattern.
func fitPattern(req sim.Request, tl *sim.TooLargeError) (sim.Request, bool) {
	if tl.Size <= 0 || tl.Max <= 0 {
		return req, false
	}
	q, w, err := sim.ParseRate(cmp.Or(req.Reference, req.Limit))
	if err != nil {
		return req, false
	}
	p := req.Pattern.WithDefaults(q, w)
	ratio := fitMargin * float64(tl.Max) / float64(tl.Size)
	if p.Name == sim.PatternManyKeys && p.Keys > fitMinKeys {
		keys := max(int(math.Floor(float64(p.Keys)*ratio)), fitMinKeys)
		ratio *= float64(p.Keys) / float64(keys)
		p.Keys = keys
	}
	duration := p.Duration
	if ratio < 0.999 { // below 1 by more than the keys' rounding
		had := float64(p.Duration.D()) / float64(w)
		windows := math.Floor(had * ratio)
		if windows < fitMinWindows {
			windows = min(fitMinWindows, had)
			ratio *= had / windows
			f := ratio
			if tl.Bound == "work" {
				f = math.Sqrt(ratio)
			}
			var ok bool
			if req, ok = scaleQuantity(req, q, f); !ok {
				return req, false
			}
		}
		duration = sim.Duration(time.Duration(windows * float64(w)))
	}
	fitted := *req.Pattern
	fitted.Keys = p.Keys
	shorten(&fitted, p.Duration, duration)
	req.Pattern = &fitted
	return req, true
}

// shorten sets p's duration to to, from from, and scales by the same ratio
// the spike's start and length and the diurnal period that p sets itself
// (their defaults follow the duration or the window), so that the traffic
// keeps its shape: a spike at 8m of 10m is at 5m36s of 7m. A start stays
// within the duration.
func shorten(p *sim.Pattern, from, to sim.Duration) {
	p.Duration = to
	if from <= 0 || to == from {
		return
	}
	r := float64(to) / float64(from)
	scale := func(d sim.Duration) sim.Duration {
		if d == 0 {
			return 0
		}
		us := math.Round(float64(d) * r / float64(time.Microsecond))
		return sim.Duration(max(time.Duration(us)*time.Microsecond, 1))
	}
	p.SpikeLength, p.Period = scale(p.SpikeLength), scale(p.Period)
	if p.SpikeAt > 0 && p.SpikeAt < from {
		p.SpikeAt = min(scale(p.SpikeAt), to-sim.Duration(time.Microsecond))
	}
}

// scaleQuantity returns req with its reference's quantity q (its limit's
// when it has no reference) made the largest 1, 2 or 5 times a power of
// ten at most q·f, and at least fitMinQuantity, and its limit's quantity
// and burst made smaller alike (rounded, at least 1); false when that is
// not below q.
func scaleQuantity(req sim.Request, q int64, f float64) (sim.Request, bool) {
	scaled := max(roundDown125(float64(q)*f), fitMinQuantity)
	if scaled >= q {
		return req, false
	}
	by := float64(scaled) / float64(q)
	var ok bool
	if req.Reference != "" {
		if req.Reference, ok = withQuantity(req.Reference, func(int64) int64 { return scaled }); !ok {
			return req, false
		}
		req.Limit, ok = withQuantity(req.Limit, func(n int64) int64 { return max(int64(math.Round(float64(n)*by)), 1) })
	} else {
		req.Limit, ok = withQuantity(req.Limit, func(int64) int64 { return scaled })
	}
	if req.Burst > 0 {
		req.Burst = max(int64(math.Round(float64(req.Burst)*by)), 1)
	}
	return req, ok
}

// roundDown125 returns the largest 1, 2 or 5 times a power of ten at most
// x, 0 when x < 1.
func roundDown125(x float64) int64 {
	if x < 1 {
		return 0
	}
	p := int64(1)
	for float64(p)*10 <= x {
		p *= 10
	}
	for _, m := range []int64{5, 2} {
		if float64(p*m) <= x {
			return p * m
		}
	}
	return p
}

// withQuantity returns the rate s ("10000/month", as sim.ParseRate reads
// it) with its quantity q made to(q), and whether s could be read.
func withQuantity(s string, to func(q int64) int64) (string, bool) {
	q, _, err := sim.ParseRate(s)
	if err != nil {
		return s, false
	}
	_, window, _ := strings.Cut(strings.TrimSpace(s), "/")
	return strconv.FormatInt(to(q), 10) + "/" + strings.TrimSpace(window), true
}

// fitNote says how fitted differs from the pattern as asked (sized by
// default), "" when it does not: "many-keys was replayed from 360 keys
// (not 1000) …", "spike was replayed over 2 windows (not 10), at
// 5000/month (not 10000/month) with its traffic scaled alike: 6000
// requests a window per key (not 12000) …".
func fitNote(asked, fitted sim.Request, limits designerLimits) string {
	if asked.Pattern == nil || fitted.Pattern == nil {
		return ""
	}
	q, w, err := sim.ParseRate(cmp.Or(asked.Reference, asked.Limit))
	if err != nil {
		return ""
	}
	fq, _, err := sim.ParseRate(cmp.Or(fitted.Reference, fitted.Limit))
	if err != nil {
		return ""
	}
	a := asked.Pattern.WithDefaults(q, w)
	f := fitted.Pattern.WithDefaults(fq, w)
	var what []string
	if a.Keys != f.Keys {
		what = append(what, fmt.Sprintf("from %d keys (not %d)", f.Keys, a.Keys))
	}
	if a.Duration != f.Duration {
		what = append(what, fmt.Sprintf("over %s (not %g)", windowsText(f.Duration.D(), w), windows(a.Duration.D(), w)))
		what = append(what, timingNote(asked.Pattern, fitted.Pattern)...)
	}
	if fq != q {
		s := fmt.Sprintf("at %s (not %s)", strings.TrimSpace(fitted.Limit), strings.TrimSpace(asked.Limit))
		if asked.Reference != "" {
			s += fmt.Sprintf(" against %s (not %s)", strings.TrimSpace(fitted.Reference), strings.TrimSpace(asked.Reference))
		}
		if asked.Burst != fitted.Burst {
			s += fmt.Sprintf(", burst %d (not %d)", fitted.Burst, asked.Burst)
		}
		var traffic []string
		if a.Rate != f.Rate {
			traffic = append(traffic, fmt.Sprintf("%s requests a window per key (not %s)", perWindow(f.Rate, w), perWindow(a.Rate, w)))
		}
		if a.Name == sim.PatternBoundaryBurst && a.BurstSize != f.BurstSize {
			traffic = append(traffic, fmt.Sprintf("bursts of %d requests (not %d)", f.BurstSize, a.BurstSize))
		}
		if len(traffic) > 0 {
			s += " with its traffic scaled alike: " + strings.Join(traffic, ", ")
		}
		what = append(what, s)
	}
	if len(what) == 0 {
		return ""
	}
	return fmt.Sprintf("%s was replayed %s, to stay within what the designer runs at once (%s requests, %s decisions of work); %s.",
		a.Name, strings.Join(what, ", "), thousands(int64(limits.maxArrivals)), thousands(limits.maxWork), cliNote(asked))
}

// cliNote says whether `sluice simulate`, with its default bounds
// (sim.DefaultMaxArrivals requests, -max-work sim.DefaultMaxWork), replays
// asked whole, and how to run it when only the work bound refuses it.
func cliNote(asked sim.Request) string {
	asked.MaxArrivals, asked.MaxWork = 0, sim.DefaultMaxWork
	var tl *sim.TooLargeError
	if !errors.As(asked.Validate(), &tl) {
		return "sluice simulate replays it whole"
	}
	if tl.Bound == "work" {
		return fmt.Sprintf("it is above the %s decisions of work sluice simulate runs by default (use -max-work 0)", thousands(sim.DefaultMaxWork))
	}
	return fmt.Sprintf("it is above the %s requests sluice simulate replays too", thousands(sim.DefaultMaxArrivals))
}

// timingNote says how the spike's start and length and the diurnal period
// that asked sets itself differ in fitted (see shorten): "with its spike at
// 5m36s (not 8m)".
func timingNote(asked, fitted *sim.Pattern) []string {
	var what []string
	differs := func(name string, a, f sim.Duration) {
		if a != 0 && a != f {
			what = append(what, fmt.Sprintf("with its %s %s (not %s)", name, f, a))
		}
	}
	switch asked.Name {
	case sim.PatternSpike, sim.PatternRetryStorm:
		differs("spike at", asked.SpikeAt, fitted.SpikeAt)
		differs("spike lasting", asked.SpikeLength, fitted.SpikeLength)
	case sim.PatternDiurnal:
		differs("period", asked.Period, fitted.Period)
	}
	return what
}

// perWindow writes a rate per second as requests per window w, to two
// decimals: "12000", "0.5".
func perWindow(rate float64, w time.Duration) string {
	return strconv.FormatFloat(math.Round(rate*w.Seconds()*100)/100, 'f', -1, 64)
}

// windows returns d as a count of windows w, to two decimals.
func windows(d, w time.Duration) float64 {
	return math.Round(float64(d)/float64(w)*100) / 100
}

// windowsText writes d as a count of windows w: "7 windows".
func windowsText(d, w time.Duration) string {
	if n := windows(d, w); n != 1 {
		return fmt.Sprintf("%g windows", n)
	}
	return "1 window"
}

// fitToBounds returns req, fitted to the bounds when its pattern is sized
// by default and above one (see fitPattern), and the error of
// sim.Request.Validate on what it returns.
func fitToBounds(req sim.Request) (sim.Request, error) {
	err := req.Validate()
	if !sizedByDefault(req) {
		return req, err
	}
	for range fitTries {
		var tl *sim.TooLargeError
		if !errors.As(err, &tl) {
			break
		}
		fitted, ok := fitPattern(req, tl)
		if !ok {
			break
		}
		req, err = fitted, fitted.Validate()
	}
	return req, err
}

// thousands writes n ≥ 0 with a comma between each group of three digits:
// "10,000,000".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
