package config

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
)

// calendarPeriods are the words a limit's window may be instead of a
// duration: a fixed window per calendar period (sluice.Calendar).
var calendarPeriods = map[string]sluice.Period{
	"day": sluice.Day, "week": sluice.Week, "month": sluice.Month, "year": sluice.Year,
}

// weekdays are the days a calendar week may start on, by their distance
// from Monday.
var weekdays = map[string]int{
	"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
}

// zoneOffset decodes a calendar's zone: "UTC", "Z" or a fixed offset from
// UTC, "+09:00" or "-05:30", at most 14 hours. A zone is returned as how
// far east of UTC it is.
func (d *decoder) zoneOffset(n *yaml.Node, path string) time.Duration {
	s := d.Str(n, path)
	if s == "UTC" || s == "Z" {
		return 0
	}
	bad := func() time.Duration {
		d.Errorf(n, path, "%q is not a zone: use UTC or a fixed offset from it such as +09:00 or -05:30 "+
			"(a named zone with daylight saving time has days of 23 and 25 hours, which a calendar limit does not follow)", s)
		return 0
	}
	if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
		return bad()
	}
	h, errH := strconv.Atoi(s[1:3])
	m, errM := strconv.Atoi(s[4:6])
	if errH != nil || errM != nil || m > 59 || h*60+m > 14*60 {
		return bad()
	}
	east := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if s[0] == '-' {
		east = -east
	}
	return east
}

// calendarStart decodes when a calendar period starts, as a duration after
// the period's usual start: a weekday for a week (default monday), a day
// of the month from 1 to 28 for a month (default 1).
func (d *decoder) calendarStart(n *yaml.Node, path string, period sluice.Period) time.Duration {
	day := 24 * time.Hour
	switch period {
	case sluice.Week:
		s := strings.ToLower(d.Str(n, path))
		if i, ok := weekdays[s]; ok {
			return time.Duration(i) * day
		}
		if n.Kind == yaml.ScalarNode {
			d.Errorf(n, path, "%q is not a weekday (monday … sunday)", n.Value)
		}
	case sluice.Month:
		return time.Duration(d.Int(n, path, 1, 28)-1) * day
	default:
		d.Errorf(n, path, "applies only to a week (a weekday) or a month (a day from 1 to 28), not a %v", period)
	}
	return 0
}
