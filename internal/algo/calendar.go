package algo

// Period is a calendar period, the window of a calendar fixed window. Its
// values are sluice.Period's; 0 is no calendar (windows of W µs aligned to
// the epoch).
type Period uint8

const (
	PeriodDay Period = iota + 1
	PeriodWeek
	PeriodMonth
	PeriodYear
)

// Day is a day in µs. Calendar days are of UTC (or of a fixed offset from
// it): every day is Day long, leap seconds being no part of Unix time.
const Day = 86_400_000_000

// epochDays is the number of days from 1970-01-01 to sluice's epoch,
// 2020-01-01.
const epochDays = 18_262

// Longest returns the longest window of period in µs (31 days for a month,
// 366 for a year), or 0 for no period.
func (p Period) Longest() int64 {
	switch p {
	case PeriodDay:
		return Day
	case PeriodWeek:
		return 7 * Day
	case PeriodMonth:
		return 31 * Day
	case PeriodYear:
		return 366 * Day
	}
	return 0
}

// Shortest returns the shortest window of period in µs (28 days for a
// month, 365 for a year), or 0 for no period.
func (p Period) Shortest() int64 {
	switch p {
	case PeriodMonth:
		return 28 * Day
	case PeriodYear:
		return 365 * Day
	}
	return p.Longest()
}

// NewCalendarParams returns the parameters of a fixed window of q units per
// calendar period, whose windows start off µs after those of the UTC
// calendar: at midnight (a day), Monday's midnight (a week), the first of
// the month's (a month) or January the first's (a year), each plus off. The
// caller has checked q in [1, 2^40], period valid and |off| below
// period.Shortest(). W is the longest window (period.Longest()).
func NewCalendarParams(q int64, period Period, off int64) Params {
	w := period.Longest()
	p, _ := NewParams(KindFixedWindow, q, w, q, 0)
	p.Period, p.Offset = period, off
	return p
}

// Window returns the window of p that holds t (a clamped time): its start
// and end in µs. Without a period, windows are W long from the epoch.
func (p *Params) Window(t int64) (start, end int64) {
	if p.Period == 0 {
		start = windowStart(t, p.W)
		return start, start + p.W
	}
	return CalendarWindow(p.Period, p.Offset, t)
}

// CalendarWindow returns the window of period, shifted by off µs, that
// holds t (see NewCalendarParams), for any t within [MinTime, MaxTime]:
// the days counted are then within ±2^28, far inside the arithmetic's
// range.
//
// Go twin of calendar_window in redis/lua/arith.lua.
func CalendarWindow(period Period, off, t int64) (start, end int64) {
	d := floorDiv(t-off, Day) + epochDays // days since 1970-01-01
	var first, next int64
	switch period {
	case PeriodDay:
		first, next = d, d+1
	case PeriodWeek:
		first = d - floorMod(d+3, 7) // 1970-01-01 was a Thursday
		next = first + 7
	case PeriodMonth:
		y, m, _ := civil(d)
		first = daysFromCivil(y, m, 1)
		if m == 12 {
			next = daysFromCivil(y+1, 1, 1)
		} else {
			next = daysFromCivil(y, m+1, 1)
		}
	default:
		y, _, _ := civil(d)
		first, next = daysFromCivil(y, 1, 1), daysFromCivil(y+1, 1, 1)
	}
	return (first-epochDays)*Day + off, (next-epochDays)*Day + off
}

// floorDiv returns ⌊a/m⌋ for m > 0, also for negative a.
func floorDiv(a, m int64) int64 {
	return (a - floorMod(a, m)) / m
}

// civil returns the proleptic Gregorian year, month (1-12) and day (1-31)
// of day d since 1970-01-01 (Howard Hinnant's civil_from_days).
func civil(d int64) (y, m, day int64) {
	z := d + 719_468
	era := floorDiv(z, 146_097)
	doe := z - era*146_097                                    // [0, 146096]
	yoe := (doe - doe/1_460 + doe/36_524 - doe/146_096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)                  // [0, 365]
	mp := (5*doy + 2) / 153                                   // [0, 11], from March
	day = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, day
}

// daysFromCivil returns the day since 1970-01-01 of year y, month m (1-12),
// day d of the proleptic Gregorian calendar (Hinnant's days_from_civil).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400 // [0, 399]
	mp := m - 3        // from March
	if m <= 2 {
		mp = m + 9
	}
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146_097 + doe - 719_468
}
