package sluice

import (
	"fmt"
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// A Period is a calendar period: the window of a limit built by Calendar.
type Period uint8

// The calendar periods, of the UTC calendar unless WithOffset shifts them.
const (
	Day   Period = iota + 1 // from midnight
	Week                    // from Monday's midnight
	Month                   // from the first of the month's midnight
	Year                    // from January the first's midnight
)

var periodNames = [...]string{Day: "day", Week: "week", Month: "month", Year: "year"}

// String returns "day", "week", "month" or "year".
func (p Period) String() string {
	if p.valid() {
		return periodNames[p]
	}
	return fmt.Sprintf("Period(%d)", uint8(p))
}

func (p Period) valid() bool { return p >= Day && p <= Year }

// Calendar returns a fixed-window limit of quantity per calendar period:
// the quota a billing plan states ("10,000 requests a month"), counted
// from the period's first moment and whole again at the next one, however
// long the period is (28 to 31 days for a month, 365 or 366 for a year).
// Periods are of the UTC calendar; WithOffset moves them to another zone
// or start. Its default name is "per-" and the period ("per-month"), and
// its Window is the period's longest (31 days for a month), the longest a
// state must be kept. Quantity must be in [1, MaxQuantity].
func Calendar(quantity int64, period Period) Limit {
	l := Limit{name: "calendar", alg: AlgorithmFixedWindow, q: quantity, period: period}
	if period.valid() {
		l.name, l.w = "per-"+period.String(), algo.Period(period).Longest()
	}
	return l.build()
}

// WithOffset returns a copy of calendar limit l whose windows start d after
// the UTC calendar's: -9h for the days, weeks, months or years of a zone
// nine hours east of UTC (Japan's), 6*24h for weeks from Sunday, 14*24h for
// months from the fifteenth. |d| must be below the period's shortest
// length (a day, a week, 28 days, 365 days); d is truncated to whole
// microseconds. Zones with daylight saving time have days of 23 and 25
// hours, which a fixed offset does not follow. Zero restores the UTC
// calendar; an offset on a limit that is not a calendar limit is invalid.
func (l Limit) WithOffset(d time.Duration) Limit {
	l.off = int64(d / time.Microsecond)
	return l.build()
}

// Period returns the calendar period of a limit built by Calendar, or 0.
func (l Limit) Period() Period { return l.period }

// Offset returns how long after the UTC calendar's a calendar limit's
// windows start (see WithOffset); 0 for every other limit.
func (l Limit) Offset() time.Duration { return time.Duration(l.off) * time.Microsecond }

// validateCalendar reports why l's period or offset is invalid, or nil.
func (l Limit) validateCalendar() error {
	switch {
	case l.period == 0 && l.off != 0:
		return fmt.Errorf("%w: %s: an offset applies only to a calendar limit", ErrInvalidLimit, l.name)
	case l.period == 0:
		return nil
	case !l.period.valid():
		return fmt.Errorf("%w: %s: unknown calendar period %v", ErrInvalidLimit, l.name, l.period)
	case l.alg != AlgorithmFixedWindow:
		return fmt.Errorf("%w: %s: a calendar period applies only to fixed-window, not %v", ErrInvalidLimit, l.name, l.alg)
	}
	if s := algo.Period(l.period).Shortest(); l.off <= -s || l.off >= s {
		return fmt.Errorf("%w: %s: offset %v must be shorter than the shortest %v (%v)", ErrInvalidLimit, l.name,
			l.Offset(), l.period, time.Duration(s)*time.Microsecond)
	}
	return nil
}
