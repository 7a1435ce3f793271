package calendartext

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

func TestZone(t *testing.T) {
	for s, want := range map[string]time.Duration{"": 0, "UTC": 0, "Z": 0, "+09:00": 9 * time.Hour,
		"-05:30": -5*time.Hour - 30*time.Minute, "+14:00": 14 * time.Hour, "-00:45": -45 * time.Minute} {
		if got, err := Zone(s); err != nil || got != want {
			t.Errorf("Zone(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"Europe/Paris", "+9:00", "+14:01", "+10:60", "09:00", "+0a:00", "utc",
		"++1:00", "+-0:00", "+09:+5", "-09:-0"} { // signs inside the digits
		if _, err := Zone(s); err == nil {
			t.Errorf("Zone(%q) accepted", s)
		}
	}
}

func TestStart(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		p    sluice.Period
		s    string
		want time.Duration
	}{{sluice.Week, "", 0}, {sluice.Week, "Sunday", 6 * day}, {sluice.Week, "monday", 0}, {sluice.Month, "15", 14 * day},
		{sluice.Month, "1", 0}, {sluice.Year, "", 0}} {
		if got, err := Start(c.p, c.s); err != nil || got != c.want {
			t.Errorf("Start(%v, %q) = %v, %v; want %v", c.p, c.s, got, err, c.want)
		}
	}
	for _, c := range []struct {
		p sluice.Period
		s string
	}{{sluice.Week, "someday"}, {sluice.Month, "29"}, {sluice.Month, "0"}, {sluice.Year, "2"}, {sluice.Day, "monday"},
		{sluice.Month, "+5"}, {sluice.Month, " 5"}} {
		if _, err := Start(c.p, c.s); err == nil {
			t.Errorf("Start(%v, %q) accepted", c.p, c.s)
		}
	}
}

// Split gives back the days and zone Offset was made of, for every zone of
// quarter hours from -11:45 to +12:00 and starts of up to 27 days; zones
// beyond 12 hours are named as their twin a day apart, but where that
// would be before the period's first day.
func TestSplitUndoesOffset(t *testing.T) {
	day := 24 * time.Hour
	name := func(east time.Duration) string {
		switch {
		case east > 0:
			return "UTC+" + hhmm(east)
		case east < 0:
			return "UTC-" + hhmm(-east)
		}
		return "UTC"
	}
	for east := -12*time.Hour + 15*time.Minute; east <= 12*time.Hour; east += 15 * time.Minute {
		for days := 0; days < 28; days++ {
			if gotDays, zone := Split(Offset(east, time.Duration(days)*day)); gotDays != days || zone != name(east) {
				t.Fatalf("east %v, %d days: Split = %d, %s", east, days, gotDays, zone)
			}
		}
	}
	for _, c := range []struct {
		east     time.Duration
		days     int
		wantDays int
		wantZone string
	}{
		{14 * time.Hour, 0, 0, "UTC+14:00"},   // Kiribati, from the 1st
		{13 * time.Hour, 0, 0, "UTC+13:00"},   // Tonga, from the 1st
		{13 * time.Hour, 14, 13, "UTC-11:00"}, // Tonga, from the 15th: the 14th at UTC-11:00, the same moment
		{-12 * time.Hour, 0, 1, "UTC+12:00"},  // the same moment as the 2nd at UTC+12:00
	} {
		if d, z := Split(Offset(c.east, time.Duration(c.days)*day)); d != c.wantDays || z != c.wantZone {
			t.Errorf("east %v, %d days: Split = %d %s, want %d %s", c.east, c.days, d, z, c.wantDays, c.wantZone)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 23: "23rd", 28: "28th"} {
		if got := Ordinal(n); got != want {
			t.Errorf("Ordinal(%d) = %s", n, got)
		}
	}
}
