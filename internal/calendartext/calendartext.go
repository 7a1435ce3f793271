// Package calendartext reads and writes the words of calendar limits
// (sluice.Calendar) as the configuration, the designer and the client
// docs use them: a zone as a fixed offset from UTC ("+09:00"), the day a
// period starts ("sunday", 15), and the offset of sluice.Limit.WithOffset
// they make together, and back.
package calendartext

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

const day = 24 * time.Hour

// Zone returns how far east of UTC a zone is: "UTC", "Z" and "" are UTC,
// otherwise a fixed offset "+hh:mm" or "-hh:mm" of at most 14 hours. A
// named zone is refused: its days of 23 and 25 hours under daylight
// saving time are not a fixed offset's.
func Zone(s string) (time.Duration, error) {
	switch s {
	case "", "UTC", "Z":
		return 0, nil
	}
	bad := fmt.Errorf("%q is not a zone: use UTC or a fixed offset from it such as +09:00 or -05:30 "+
		"(a named zone with daylight saving time has days of 23 and 25 hours, which a calendar limit does not follow)", s)
	if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
		return 0, bad
	}
	h, okH := number(s[1:3])
	m, okM := number(s[4:6])
	if !okH || !okM || m > 59 || h*60+m > 14*60 {
		return 0, bad
	}
	east := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if s[0] == '-' {
		east = -east
	}
	return east, nil
}

// weekdays are the days a week may start on, from Monday.
var weekdays = [...]string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// Start returns how long after its usual first day a period of p starts
// when it starts on s: a weekday for a week (any case; "" is Monday), a
// day of the month from 1 to 28 for a month ("" is the 1st). Other
// periods take no start but "".
func Start(p sluice.Period, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	switch p {
	case sluice.Week:
		for i, d := range weekdays {
			if strings.EqualFold(s, d) {
				return time.Duration(i) * day, nil
			}
		}
		return 0, fmt.Errorf("%q is not a weekday (monday … sunday)", s)
	case sluice.Month:
		n, ok := number(s)
		if !ok || n < 1 || n > 28 {
			return 0, fmt.Errorf("%q is not a day from 1 to 28", s)
		}
		return time.Duration(n-1) * day, nil
	}
	return 0, fmt.Errorf("applies only to a week (a weekday) or a month (a day from 1 to 28), not a %v", p)
}

// number reads s, 1 to 9 ASCII digits and nothing else (no sign, no
// space), as a decimal number.
func number(s string) (int, bool) {
	if len(s) < 1 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = 10*n + int(s[i]-'0')
	}
	return n, true
}

// Offset returns the offset (sluice.Limit.WithOffset) of the periods of a
// calendar in a zone east of UTC by east, starting start after their usual
// first day.
func Offset(east, start time.Duration) time.Duration { return start - east }

// Split is Offset's inverse: the whole days after the period's usual first
// day and the zone, "UTC" or "UTC±hh:mm", whose midnight starts the period.
// An offset that is not whole days is the midnight of a zone east of UTC
// and of one west of it a day apart (15th at UTC+13:00 is 14th at
// UTC-11:00): Split names the one within 12 hours of UTC (east at 12),
// unless its days would be negative.
func Split(off time.Duration) (days int, zone string) {
	r := off % day
	if r < 0 {
		r += day
	}
	days = int((off - r) / day)
	if r == 0 {
		return days, "UTC"
	}
	// The periods start r after a UTC midnight: the midnight of a zone
	// east of UTC by day - r (the next day there), or west of it by r.
	if east := day - r; east <= 12*time.Hour || days < 0 {
		return days + 1, "UTC+" + hhmm(east)
	}
	return days, "UTC-" + hhmm(r)
}

func hhmm(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// Ordinal returns "1st", "2nd", "3rd", "4th" … "28th".
func Ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// Note says when a calendar limit's quota is whole again, in its
// clients' words: "counted per calendar month, whole again on the 1st at
// 00:00 UTC" (see WholeAgain).
func Note(l sluice.Limit) string {
	return "counted per calendar " + l.Period().String() + ", whole again " + WholeAgain(l)
}

// WholeAgain says when a calendar limit's periods start: "on the 1st at
// 00:00 UTC", "on the 15th at 00:00 UTC+09:00", "on Sunday at 00:00
// UTC-05:30", "every day at 00:00 UTC+14:00". The zone is Split's, but
// for a month that would then start after the 28th, or a year after its
// 365th day, which not every one has: "on the 28th at 00:00 UTC-12:00",
// not the 29th at UTC+12:00.
// Periods starting before their usual first day (a negative offset of
// whole days) start "on the last day of the month", "on the 2nd-to-last
// day of the year", "on Saturday".
func WholeAgain(l sluice.Limit) string {
	off := l.Offset()
	days, zone := Split(off)
	if l.Period() == sluice.Month && days > 27 || l.Period() == sluice.Year && days > 364 {
		// Not whole days (r > 0): below the shortest period, an offset
		// passes its last day only named east.
		r := off % day
		days, zone = int((off-r)/day), "UTC-"+hhmm(r)
	}
	var when string
	switch l.Period() {
	case sluice.Day:
		when = "every day"
	case sluice.Week:
		when = "on " + time.Weekday(((1+days)%7+7)%7).String()
	case sluice.Month:
		when = "on the " + Ordinal(days+1)
		if days < 0 {
			when = "on the " + toLast(-days) + " day of the month"
		}
	default:
		switch {
		case days < 0:
			when = "on the " + toLast(-days) + " day of the year"
		case days > 0:
			when = "on day " + fmt.Sprint(days+1) + " of the year"
		default:
			when = "on January 1"
		}
	}
	return when + " at 00:00 " + zone
}

// toLast returns "last" for 1, else "2nd-to-last", "3rd-to-last" …
func toLast(n int) string {
	if n == 1 {
		return "last"
	}
	return Ordinal(n) + "-to-last"
}
