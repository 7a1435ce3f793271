package sim

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in string
		q  int64
		w  time.Duration
	}{
		{"100/1m", 100, time.Minute},
		{"10/s", 10, time.Second},
		{"5/500ms", 5, 500 * time.Millisecond},
		{"1000/day", 1000, 24 * time.Hour},
		{"50000/7d", 50000, 7 * 24 * time.Hour},
		{" 3 / minute ", 3, time.Minute},
		{"7/1h30m", 7, 90 * time.Minute},
		// Calendar periods: the window is the longest period.
		{"10000/month", 10000, 31 * 24 * time.Hour},
		{"500/week", 500, 7 * 24 * time.Hour},
		{" 1000000 / year ", 1000000, 366 * 24 * time.Hour},
	} {
		q, w, err := ParseRate(tc.in)
		if err != nil || q != tc.q || w != tc.w {
			t.Errorf("ParseRate(%q) = %d, %v, %v; want %d, %v", tc.in, q, w, err, tc.q, tc.w)
		}
		if _, cal := calendarWords[strings.TrimSpace(tc.in[strings.Index(tc.in, "/")+1:])]; cal {
			continue // FormatRate writes a duration; rate.String the period (TestParseRateKeepsThePeriod)
		}
		if back := FormatRate(q, w); back != "" {
			if q2, w2, err := ParseRate(back); err != nil || q2 != q || w2 != w {
				t.Errorf("FormatRate(%d, %v) = %q does not read back", q, w, back)
			}
		}
	}
	for _, bad := range []string{"", "100", "0/1m", "-1/1m", "x/1m", "100/", "100/0s", "100/-1m", "100/1ns", "100/fortnight",
		"100/months", "100/Month", "100/1month", "0/month", "-5/week", "x/year", "/month", "1099511627777/month"} {
		if _, _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted a bad rate", bad)
		}
	}
}

// A calendar word is a quota per calendar period, and reads back as one;
// "day" stays the 24h duration it has always been (as a fixed window it
// is the UTC calendar day).
func TestParseRateKeepsThePeriod(t *testing.T) {
	for in, want := range map[string]sluice.Limit{
		"10000/month": sluice.Calendar(10000, sluice.Month),
		"500/week":    sluice.Calendar(500, sluice.Week),
		"7/year":      sluice.Calendar(7, sluice.Year),
	} {
		r, err := parseRate(in)
		if err != nil || !r.calendar() || r.period != want.Period() || r.q != want.Quantity() || r.w != want.Window() || r.String() != in {
			t.Errorf("parseRate(%q) = %+v, %v; want %v", in, r, err, want)
		}
		l, err := r.limit(sluice.AlgorithmFixedWindow, 0, 0)
		if err != nil || l.String() != want.String() {
			t.Errorf("%s: fixed window %v, %v; want %v", in, l, err, want)
		}
		// The other algorithms are given the longest period as their window.
		if l, err := r.limit(sluice.AlgorithmSlidingLog, 0, 0); err != nil || l.Period() != 0 || l.Window() != want.Window() {
			t.Errorf("%s: sliding log %v, %v", in, l, err)
		}
	}
	for _, in := range []string{"1000/day", "1000/d", "1000/24h", "1000/7d"} {
		if r, err := parseRate(in); err != nil || r.calendar() {
			t.Errorf("parseRate(%q) = %+v, %v: not a duration", in, r, err)
		}
	}
	if _, _, err := ParseRate("100/fortnight"); err == nil || !strings.Contains(err.Error(), "month") {
		t.Errorf("a bad window's error does not name the calendar words: %v", err)
	}
}

// A requirement's zone and starts shift a calendar quota's periods as the
// configuration's do, and apply to nothing else.
func TestCalendarOfZoneAndStarts(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		rate, zone string
		starts     Starts
		period     sluice.Period
		offset     time.Duration
		text       string
	}{
		{"10/month", "", "", sluice.Month, 0, "month"},
		{"10/month", "+09:00", "15", sluice.Month, 14*day - 9*time.Hour, "month (from the 15th, UTC+09:00)"},
		{"10/month", "UTC", "1", sluice.Month, 0, "month (from the 1st, UTC)"},
		{"10/week", "-05:30", "sunday", sluice.Week, 6*day + 5*time.Hour + 30*time.Minute, "week (from Sunday, UTC-05:30)"},
		{"10/year", "+14:00", "", sluice.Year, -14 * time.Hour, "year (UTC+14:00)"},
		{"10/day", "+09:00", "", sluice.Day, -9 * time.Hour, "day (UTC+09:00)"}, // a calendar day of the zone
	} {
		r, err := calendarOf(tc.rate, tc.zone, tc.starts)
		if err != nil || r.period != tc.period || r.offset != tc.offset || r.per() != tc.text {
			t.Errorf("%s zone %q starts %q: %+v %q, %v; want %v offset %v %q", tc.rate, tc.zone, tc.starts, r, r.per(), err, tc.period, tc.offset, tc.text)
			continue
		}
		if l, err := r.limit(sluice.AlgorithmFixedWindow, 0, 0); err != nil || l.Offset() != tc.offset {
			t.Errorf("%s: limit %v, %v", tc.rate, l, err)
		}
	}
	for _, bad := range []struct {
		rate, zone string
		starts     Starts
	}{
		{"10/1m", "+09:00", ""}, {"10/day", "", "3"}, {"10/year", "", "2"}, {"10/month", "", "29"},
		{"10/month", "", "monday"}, {"10/week", "", "15"}, {"10/month", "+15:00", ""}, {"10/month", "Asia/Tokyo", ""},
		{"10/month", "+09:60", ""}, {"10/month", "09:00", ""},
	} {
		if r, err := calendarOf(bad.rate, bad.zone, bad.starts); err == nil {
			t.Errorf("%s zone %q starts %q accepted: %+v", bad.rate, bad.zone, bad.starts, r)
		}
	}
}

// What a simulation measures per calendar period uses Go's calendar; it
// agrees with the windows the calendar limit itself counts.
func TestPeriodBoundsAreTheKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []sluice.Period{sluice.Day, sluice.Week, sluice.Month, sluice.Year} {
		for _, off := range []time.Duration{0, -9 * time.Hour, 14*24*time.Hour - 9*time.Hour, 5*time.Hour + 30*time.Minute} {
			if p == sluice.Day && (off >= 24*time.Hour || off <= -24*time.Hour) {
				continue
			}
			r := calendarRate(1, p, off)
			for range 2000 {
				t0 := rng.Int64N(20*366*86_400_000_000) - 5*366*86_400_000_000
				start, end := r.bounds(t0)
				ks, ke := algo.CalendarWindow(algo.Period(p), int64(off/time.Microsecond), t0)
				if start != ks || end != ke || t0 < start || t0 >= end {
					t.Fatalf("%v offset %v at %v: bounds [%v, %v), the kernel's [%v, %v)", p, off,
						sluice.TimeFromMicros(t0), sluice.TimeFromMicros(start), sluice.TimeFromMicros(end), sluice.TimeFromMicros(ks), sluice.TimeFromMicros(ke))
				}
			}
		}
	}
	// Boundary bursts cross every other period start: February, April, …
	var got []string
	for _, b := range calendarRate(1, sluice.Month, 0).boundaries(sluice.MicrosSinceEpoch(time.Date(2020, 9, 1, 0, 0, 0, 0, time.UTC)) + 1) {
		got = append(got, sluice.TimeFromMicros(b).Format("Jan 2"))
	}
	if strings.Join(got, ", ") != "Feb 1, Apr 1, Jun 1, Aug 1" {
		t.Errorf("month boundaries %v", got)
	}
}

func TestFormatDurationIsShortAndExact(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "1m", time.Hour: "1h", 24 * time.Hour: "24h", 90 * time.Second: "1m30s",
		1500 * time.Millisecond: "1.5s", 2*time.Hour + time.Second: "2h0m1s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Errorf("FormatDuration(%v) does not read back: %v %v", d, back, err)
		}
	}
}

func TestDurationJSONReadsStringsAndSeconds(t *testing.T) {
	var v struct{ A, B, C Duration }
	if err := json.Unmarshal([]byte(`{"A":"1m","B":1.5,"C":"2d"}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.A.D() != time.Minute || v.B.D() != 1500*time.Millisecond || v.C.D() != 48*time.Hour {
		t.Fatalf("got %v %v %v", v.A, v.B, v.C)
	}
	out, _ := json.Marshal(v)
	if string(out) != `{"A":"1m","B":"1.5s","C":"48h"}` {
		t.Fatalf("marshalled %s", out)
	}
	if err := json.Unmarshal([]byte(`{"A":"soon"}`), &v); err == nil {
		t.Fatal("a bad duration was accepted")
	}
}

// A duration beyond what a time.Duration holds is refused, never wrapped
// around or converted as the platform happens to convert an out-of-range
// float: 1e300 seconds became -2562047h on amd64.
func TestDurationsBeyondTheRangeAreRefused(t *testing.T) {
	for _, s := range []string{"99999d2562047h", "1d2562047h"} {
		if d, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", s, d)
		}
	}
	for _, b := range []string{`1e300`, `-1e300`, `9223372037`, `1e19`} {
		var d Duration
		if err := json.Unmarshal([]byte(b), &d); err == nil {
			t.Errorf("%s seconds read as %v, want an error", b, d.D())
		}
	}
	var d Duration
	if err := json.Unmarshal([]byte(`9223372036`), &d); err != nil || d.D() != 9223372036*time.Second {
		t.Errorf("9223372036 seconds: %v, %v", d.D(), err)
	}
}
