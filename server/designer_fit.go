package server

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
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
// (at least fitMinWindows). A request that sets the keys, rate or duration
// itself asked for that size, and is refused above a bound.
const (
	fitMinKeys    = 10
	fitMinWindows = 2
	// fitMargin is the share of a bound a fitted pattern aims at: the
	// sizes are estimates.
	fitMargin = 0.9
	// fitTries bounds the fittings of one request.
	fitTries = 3
)

// sizedByDefault reports whether req's traffic is a pattern whose size is
// all defaults: one the designer may fit to its bounds.
func sizedByDefault(req sim.Request) bool {
	p := req.Pattern
	return p != nil && req.Trace == "" && p.Keys == 0 && p.Rate == 0 && p.Duration == 0
}

// fitPattern returns req with its pattern made smaller by the ratio of the
// bound to the size in tl, and whether it could: false when the size is
// not known or the pattern would have fewer than fitMinKeys keys or
// fitMinWindows windows. req's pattern must be sized by default, or by an
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
	if ratio < 0.999 { // below 1 by more than the keys' rounding
		windows := math.Floor(float64(p.Duration.D()) * ratio / float64(w))
		if windows < fitMinWindows {
			return req, false
		}
		p.Duration = sim.Duration(time.Duration(windows) * w)
	}
	fitted := *req.Pattern
	fitted.Keys, fitted.Duration = p.Keys, p.Duration
	req.Pattern = &fitted
	return req, true
}

// fitNote says how fitted differs from the pattern as asked (sized by
// default), "" when it does not: "many-keys was replayed from 360 keys
// (not 1000) …".
func fitNote(asked, fitted sim.Request, limits designerLimits) string {
	q, w, err := sim.ParseRate(cmp.Or(asked.Reference, asked.Limit))
	if err != nil || asked.Pattern == nil || fitted.Pattern == nil {
		return ""
	}
	a := asked.Pattern.WithDefaults(q, w)
	f := fitted.Pattern.WithDefaults(q, w)
	var what string
	switch {
	case a.Keys != f.Keys && a.Duration != f.Duration:
		what = fmt.Sprintf("from %d keys (not %d), over %s (not %g)", f.Keys, a.Keys, windowsText(f.Duration.D(), w), windows(a.Duration.D(), w))
	case a.Keys != f.Keys:
		what = fmt.Sprintf("from %d keys (not %d)", f.Keys, a.Keys)
	case a.Duration != f.Duration:
		what = fmt.Sprintf("over %s (not %g)", windowsText(f.Duration.D(), w), windows(a.Duration.D(), w))
	default:
		return ""
	}
	return fmt.Sprintf("%s was replayed %s to stay within what the designer runs at once (%s requests, %s decisions of work); sluice simulate replays it whole.",
		a.Name, what, thousands(int64(limits.maxArrivals)), thousands(limits.maxWork))
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
