package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
	"github.com/sluice-dev/sluice/internal/calendartext"
)

// calendarWords are the windows of a rate that are calendar periods: a
// quota per calendar week, month or year (sluice.Calendar). A day is 24h,
// a duration: a fixed window of 24h starts at 00:00 UTC, as a calendar
// day does.
var calendarWords = map[string]sluice.Period{"week": sluice.Week, "month": sluice.Month, "year": sluice.Year}

// rate is a parsed rate: q per window w, or, when period is set, q per
// calendar period, w being the period's longest (sluice.Limit.Window's)
// and offset how far after the UTC calendar's its periods start
// (sluice.Limit.WithOffset's), as the requirement's zone and starts say.
type rate struct {
	q      int64
	w      time.Duration
	period sluice.Period
	offset time.Duration
	zone   string
	starts Starts
}

// parseRate parses a rate as ParseRate reads it, keeping its period.
func parseRate(s string) (rate, error) {
	qs, ws, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return rate{}, fmt.Errorf("rate %q: want quantity/window, e.g. 100/1m or 10000/month", s)
	}
	q, err := strconv.ParseInt(strings.TrimSpace(qs), 10, 64)
	if err != nil || q < 1 {
		return rate{}, fmt.Errorf("rate %q: quantity %q must be a positive integer", s, qs)
	}
	if q > sluice.MaxQuantity {
		return rate{}, fmt.Errorf("rate %q: quantity %d must be at most %d", s, q, int64(sluice.MaxQuantity))
	}
	ws = strings.TrimSpace(ws)
	if p, ok := calendarWords[ws]; ok {
		return calendarRate(q, p, 0), nil
	}
	w, err := parseWindow(ws)
	if err != nil {
		return rate{}, fmt.Errorf("rate %q: %w", s, err)
	}
	return rate{q: q, w: w}, nil
}

// calendarRate returns the rate of q per period, its periods starting
// offset after the UTC calendar's.
func calendarRate(q int64, p sluice.Period, offset time.Duration) rate {
	return rate{q: q, w: sluice.Calendar(1, p).Window(), period: p, offset: offset}
}

// calendar reports whether r is a quota per calendar period.
func (r rate) calendar() bool { return r.period != 0 }

// withQuantity returns r with quantity q.
func (r rate) withQuantity(q int64) rate { r.q = q; return r }

// String writes r as ParseRate reads it: "100/1m", "10000/month" (a
// calendar rate's offset is not part of it).
func (r rate) String() string {
	if r.calendar() {
		return fmt.Sprintf("%d/%s", r.q, r.period)
	}
	return FormatRate(r.q, r.w)
}

// per names r's window after "per": "1m", "month", or "month (from the
// 15th, UTC+09:00)" for a calendar rate whose periods are shifted.
func (r rate) per() string {
	if !r.calendar() {
		return FormatDuration(r.w)
	}
	if r.zone == "" && r.starts == "" {
		return r.period.String()
	}
	return r.period.String() + " (" + r.startText() + ")"
}

// span names r's window as a length: "1m", or "31 days" for a calendar
// rate (its longest period).
func (r rate) span() string {
	if !r.calendar() {
		return FormatDuration(r.w)
	}
	return fmt.Sprintf("%d days", r.w/(24*time.Hour))
}

// limit returns r's limit of algorithm alg (see LimitFor): a calendar
// rate's fixed window is the calendar window (sluice.Calendar), every other
// algorithm's window the period's longest.
func (r rate) limit(alg sluice.Algorithm, burst int64, maxWait time.Duration) (sluice.Limit, error) {
	if !r.calendar() || alg != sluice.AlgorithmFixedWindow {
		return LimitFor(alg, r.q, r.w, burst, maxWait)
	}
	l := sluice.Calendar(r.q, r.period).WithOffset(r.offset)
	return l, l.Err()
}

// contenders returns one contender per algorithm of r (see Contenders and
// rate.limit); a calendar window is labelled with its period,
// "fixed-window (month)".
func (r rate) contenders(algs []sluice.Algorithm, burst int64, maxWait time.Duration) ([]Contender, error) {
	out := make([]Contender, 0, len(algs))
	for _, a := range algs {
		l, err := r.limit(a, burst, maxWait)
		if err != nil {
			return nil, err
		}
		out = append(out, Contender{Label: r.label(a), Limit: l})
	}
	return out, nil
}

// possibleContenders is contenders for every algorithm of algs that can
// hold r: an algorithm that cannot keep it exact (a bucket of 869 per year)
// is omitted and said why, unless none can. Any other error is returned.
func (r rate) possibleContenders(algs []sluice.Algorithm, burst int64, maxWait time.Duration) ([]Contender, []Omission, error) {
	var (
		out     []Contender
		omitted []Omission
	)
	for _, a := range algs {
		cs, err := r.contenders([]sluice.Algorithm{a}, burst, maxWait)
		if err != nil && !errors.Is(err, algo.ErrInexact) {
			return nil, nil, err
		}
		if err != nil {
			omitted = append(omitted, Omission{Algorithm: a.String(), Reason: err.Error()})
			continue
		}
		out = append(out, cs...)
	}
	if len(out) == 0 {
		return nil, nil, errors.New(omitted[0].Reason)
	}
	return out, omitted, nil
}

// label is the label of r's contender of algorithm a: "" (the algorithm's
// name) but for a calendar window.
func (r rate) label(a sluice.Algorithm) string {
	if r.calendar() && a == sluice.AlgorithmFixedWindow {
		return fmt.Sprintf("%s (%s)", a, r.period)
	}
	return ""
}

// bounds returns the calendar period of r that holds t µs since
// sluice.Epoch: its start and end. They are computed with Go's calendar
// (package time), apart from the algorithm's own arithmetic, so that what
// a simulation measures per period is not the kernel checking itself.
func (r rate) bounds(t int64) (start, end int64) {
	off := int64(r.offset / time.Microsecond)
	u := sluice.TimeFromMicros(t - off)
	y, m, d := u.Date()
	var s, e time.Time
	switch r.period {
	case sluice.Day:
		s = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		e = s.AddDate(0, 0, 1)
	case sluice.Week:
		s = time.Date(y, m, d-(int(u.Weekday())+6)%7, 0, 0, 0, 0, time.UTC) // from Monday
		e = s.AddDate(0, 0, 7)
	case sluice.Month:
		s = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		e = s.AddDate(0, 1, 0)
	default:
		s = time.Date(y, time.January, 1, 0, 0, 0, 0, time.UTC)
		e = s.AddDate(1, 0, 0)
	}
	return sluice.MicrosSinceEpoch(s) + off, sluice.MicrosSinceEpoch(e) + off
}

// boundaries returns the window boundaries the boundary-burst pattern
// bursts across, in µs, before end: every other boundary from the first
// after 0 — W, 3W, 5W, … for a window W; for a calendar rate the start of
// every other period after 0 (of February, April, June, … for months from
// 2020-01-01, which is sluice.Epoch).
func (r rate) boundaries(end int64) []int64 {
	var out []int64
	if !r.calendar() {
		w := int64(r.w / time.Microsecond)
		for b := w; b < end; b += 2 * w {
			out = append(out, b)
		}
		return out
	}
	_, b := r.bounds(0)
	for b < end {
		out = append(out, b)
		_, next := r.bounds(b)
		_, b = r.bounds(next)
	}
	return out
}

// startText says where r's periods start when the requirement shifted
// them: "from the 15th, UTC+09:00", "from Sunday, UTC", "UTC-05:30".
func (r rate) startText() string {
	zone := "UTC"
	if r.zone != "" && r.zone != "UTC" && r.zone != "Z" {
		zone = "UTC" + r.zone
	}
	switch {
	case r.starts == "":
		return zone
	case r.period == sluice.Week:
		d := strings.ToLower(string(r.starts))
		return "from " + strings.ToUpper(d[:1]) + d[1:] + ", " + zone
	}
	n, _ := strconv.Atoi(string(r.starts))
	return "from the " + calendartext.Ordinal(n) + ", " + zone
}

// calendarOffset returns how long after the UTC calendar's the periods of a
// calendar quota start, from a requirement's zone and starts as the
// configuration reads them (internal/calendartext): zone "UTC", "Z" or a
// fixed offset from UTC ("+09:00", "-05:30", at most 14 hours); starts a
// weekday for a week (default monday) or a day of the month from 1 to 28
// for a month (default 1). Both empty: 0.
func calendarOffset(p sluice.Period, zone string, starts Starts) (time.Duration, error) {
	east, err := calendartext.Zone(zone)
	if err != nil {
		return 0, &fieldError{path: "zone", err: err}
	}
	start, err := calendartext.Start(p, string(starts))
	if err != nil {
		return 0, &fieldError{path: "starts", err: err}
	}
	return calendartext.Offset(east, start), nil
}

// calendarOf returns the rate of a requirement's rate, zone and starts:
// a rate per week, month or year is a calendar quota whose periods zone and
// starts may shift; a rate per day with a zone is the calendar day of that
// zone; zone and starts apply to nothing else. A refused zone or starts is
// a *fieldError naming it (see rateError).
func calendarOf(s, zone string, starts Starts) (rate, error) {
	r, err := parseRate(s)
	if err != nil {
		return r, err
	}
	if zone == "" && starts == "" {
		return r, nil
	}
	if !r.calendar() {
		if r.w != 24*time.Hour || starts != "" {
			field := "zone"
			if starts != "" {
				field = "starts"
			}
			return r, fmt.Errorf("rate %s: %w", s, fieldErrorf(field, "applies only to a calendar quota (per day, week, month or year)"))
		}
		r = calendarRate(r.q, sluice.Day, 0)
	}
	if r.offset, err = calendarOffset(r.period, zone, starts); err != nil {
		return r, fmt.Errorf("rate %s: %w", s, err)
	}
	r.zone, r.starts = zone, starts
	return r, nil
}

// Starts is the first day of a calendar quota's periods: a weekday for a
// week ("sunday"), a day of the month for a month ("15"). It reads from
// YAML and JSON as a string or a number.
type Starts string

// UnmarshalJSON reads a string or a whole number.
func (s *Starts) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*s = Starts(n.String())
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("starts %s: want a weekday or a day of the month", b)
	}
	*s = Starts(v)
	return nil
}
