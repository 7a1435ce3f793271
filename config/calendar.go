package config

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/calendartext"
	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// calendarPeriod returns the calendar period a limit's window names instead
// of a duration (day, week, month, year: sluice.Calendar), or 0.
func calendarPeriod(s string) sluice.Period {
	switch s {
	case "day":
		return sluice.Day
	case "week":
		return sluice.Week
	case "month":
		return sluice.Month
	case "year":
		return sluice.Year
	}
	return 0
}

// zoneOffset decodes a calendar's zone ("UTC", "Z", "+09:00", "-05:30"),
// returned as how far east of UTC it is.
func (d *decoder) zoneOffset(n *yaml.Node, path string) time.Duration {
	east, err := calendartext.Zone(d.Str(n, path))
	if err != nil {
		d.Errorf(n, path, "%v", err)
	}
	return east
}

// calendarStart decodes when a calendar period starts, as a duration after
// the period's usual start: a weekday for a week (default monday), a day
// of the month from 1 to 28 for a month (default 1).
func (d *decoder) calendarStart(n *yaml.Node, path string, period sluice.Period) time.Duration {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		// An empty value (a template's) is no start: refused, not read as
		// the default.
		d.Errorf(n, path, "want a weekday or a day of the month, got %s: give one, or leave starts: out", yamlcheck.Describe(n))
		return 0
	}
	start, err := calendartext.Start(period, n.Value)
	if err != nil {
		d.Errorf(n, path, "%v", err)
	}
	return start
}
