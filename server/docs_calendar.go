package server

import (
	"fmt"
	"time"

	"github.com/sluice-dev/sluice"
)

// calendarNote says when a calendar limit's quota is whole again, in its
// clients' words: "counted per calendar month, whole again on the 1st at
// 00:00 UTC", "… on the 15th at 00:00 UTC+09:00", "… on Sunday at 00:00
// UTC-05:30".
func calendarNote(l sluice.Limit) string {
	days, zone := calendarStart(l.Offset())
	var when string
	switch l.Period() {
	case sluice.Day:
		when = "every day"
	case sluice.Week:
		when = "on " + time.Weekday((1+days)%7).String()
	case sluice.Month:
		when = "on the " + ordinal(days+1)
	default:
		when = "on January 1"
		if days > 0 {
			when = "on day " + fmt.Sprint(days+1) + " of the year"
		}
	}
	return "counted per calendar " + l.Period().String() + ", whole again " + when + " at 00:00 " + zone
}

// calendarStart splits a calendar limit's offset into whole days after
// the period's usual first day and the zone whose midnight starts it: the
// zone east of UTC by at most 14 hours when there is one, else west.
func calendarStart(off time.Duration) (days int, zone string) {
	day := 24 * time.Hour
	r := off % day
	if r < 0 {
		r += day
	}
	days = int((off - r) / day)
	if r == 0 {
		return days, "UTC"
	}
	// The windows start r after a UTC midnight: midnight of a zone east of
	// UTC by day - r (the next day there), or west of it by r.
	east := day - r
	if east <= 14*time.Hour {
		return days + 1, "UTC+" + hhmm(east)
	}
	return days, "UTC-" + hhmm(r)
}

func hhmm(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// ordinal returns "1st", "2nd", "3rd", "4th" … "28th".
func ordinal(n int) string {
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
	return fmt.Sprint(n) + suffix
}
