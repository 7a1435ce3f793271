package server

import (
	"fmt"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/calendartext"
)

// calendarNote says when a calendar limit's quota is whole again, in its
// clients' words: "counted per calendar month, whole again on the 1st at
// 00:00 UTC", "… on the 15th at 00:00 UTC+09:00", "… on Sunday at 00:00
// UTC-05:30".
func calendarNote(l sluice.Limit) string {
	days, zone := calendartext.Split(l.Offset())
	var when string
	switch l.Period() {
	case sluice.Day:
		when = "every day"
	case sluice.Week:
		when = "on " + time.Weekday((1+days)%7).String()
	case sluice.Month:
		when = "on the " + calendartext.Ordinal(days+1)
	default:
		when = "on January 1"
		if days > 0 {
			when = "on day " + fmt.Sprint(days+1) + " of the year"
		}
	}
	return "counted per calendar " + l.Period().String() + ", whole again " + when + " at 00:00 " + zone
}
