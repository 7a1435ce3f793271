package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseRate parses a limit written as quantity/window, the way the designer's
// flags and requests write it: "100/1m", "10/s", "5/500ms", "1000/day",
// "50000/7d", "10000/month". The window is a Go duration ("1m", "1h30m"), a
// bare unit meaning one of it ("s", "m", "h", "d"), a count of days ("7d"),
// one of the words second, minute, hour, day (24h, which as a fixed window
// is the UTC calendar day), or a calendar period: week, month or year, a
// quota per calendar week (from Monday), month (from the 1st) or year of
// the UTC calendar, whose window is returned as the period's longest (7,
// 31 or 366 days), as sluice.Limit.Window reports a calendar limit's. The
// quantity must be an integer in [1, sluice.MaxQuantity]; the window
// positive and a whole number of microseconds.
func ParseRate(s string) (quantity int64, window time.Duration, err error) {
	r, err := parseRate(s)
	return r.q, r.w, err
}

// parseWindow parses the window half of a rate.
func parseWindow(s string) (time.Duration, error) {
	switch s {
	case "second", "s":
		return time.Second, nil
	case "minute", "min", "m":
		return time.Minute, nil
	case "hour", "h":
		return time.Hour, nil
	case "day", "d":
		return 24 * time.Hour, nil
	}
	d, err := ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("window %q: use a duration (30s, 1m, 24h, 7d) or second, minute, hour, day, week, month or year", s)
	}
	if d <= 0 || d%time.Microsecond != 0 {
		return 0, fmt.Errorf("window %q must be positive and a whole number of microseconds", s)
	}
	return d, nil
}

// ParseDuration is time.ParseDuration that also reads whole days: "7d",
// "1d12h"; a sum beyond what a time.Duration holds is an error. It is how every duration of this package's requests is read.
func ParseDuration(s string) (time.Duration, error) {
	if i := strings.IndexByte(s, 'd'); i > 0 {
		days, err := strconv.ParseInt(s[:i], 10, 64)
		if err == nil && days >= 0 && days < 100000 {
			d := time.Duration(days) * 24 * time.Hour
			if rest := s[i+1:]; rest != "" {
				r, err := time.ParseDuration(rest)
				if err != nil {
					return 0, fmt.Errorf("duration %q: use e.g. 30s, 1m, 24h or 7d", s)
				}
				if r > math.MaxInt64-d {
					return 0, fmt.Errorf("duration %q: longer than a duration holds (about 292 years)", s)
				}
				d += r
			}
			return d, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: use e.g. 30s, 1m, 24h or 7d", s)
	}
	return d, nil
}

// FormatRate writes quantity per window as ParseRate reads it, e.g. "100/1m".
func FormatRate(quantity int64, window time.Duration) string {
	return fmt.Sprintf("%d/%s", quantity, FormatDuration(window))
}

// FormatDuration writes d as a Go duration without trailing zero units:
// "1m" rather than "1m0s", "24h" rather than "24h0m0s". time.ParseDuration
// reads it back exactly.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Duration is a time.Duration that reads and writes itself in JSON (and
// YAML, and flags) as a Go duration string such as "1m" or "250ms"; JSON
// numbers are read as seconds. Days are accepted on input ("7d").
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String returns d as FormatDuration writes it.
func (d Duration) String() string { return FormatDuration(time.Duration(d)) }

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseDuration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// UnmarshalJSON reads a duration string, or a number of seconds; either
// beyond what a time.Duration holds is an error.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '"' {
		var secs float64
		if err := json.Unmarshal(b, &secs); err != nil {
			return fmt.Errorf("duration %s: want a string such as \"1m\" or a number of seconds", b)
		}
		ns := secs * float64(time.Second)
		if math.Abs(ns) >= 1<<63 { // beyond an int64 of nanoseconds
			return fmt.Errorf("duration %s seconds: longer than a duration holds (about 292 years)", b)
		}
		*d = Duration(ns)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	return d.UnmarshalText([]byte(s))
}

// Set implements flag.Value.
func (d *Duration) Set(s string) error { return d.UnmarshalText([]byte(s)) }
