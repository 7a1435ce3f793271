package migrate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/migrate"
)

// importedLimit imports src, parses the configuration it writes with
// config.Parse and returns the plan's limit named name, with the file.
func importedLimit(t *testing.T, format, src, name string) (sluice.Limit, *migrate.Translation, string) {
	t.Helper()
	tr, err := migrate.Import(format, src, "source")
	if err != nil {
		t.Fatal(err)
	}
	files, err := tr.Files(true)
	if err != nil {
		t.Fatal(err)
	}
	yaml := files[migrate.ConfigFile]
	cfg, err := config.Parse(migrate.ConfigFile, []byte(yaml))
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	for _, l := range cfg.Policy.Plan(migrate.PlanName).Limits {
		if l.Name() == name {
			return l, tr, yaml
		}
	}
	t.Fatalf("no limit %s in\n%s", name, yaml)
	return sluice.Limit{}, nil, ""
}

// spend checks limit at each of times in turn, from state s, one unit
// each, and returns the state and whether each was admitted.
func spend(l sluice.Limit, s sluice.State, times ...time.Time) (sluice.State, []bool) {
	var admitted []bool
	for _, at := range times {
		var st sluice.Status
		s, st = storetest.Decided(l.Decide(s, sluice.MicrosSinceEpoch(at), 1))
		admitted = append(admitted, st.Allowed)
	}
	return s, admitted
}

func utc(year int, month time.Month, day, hour, minute, second, micro int) time.Time {
	return time.Date(year, month, day, hour, minute, second, micro*1000, time.UTC)
}

// TestImportKongCalendarMonth: Kong's month and year are calendar months
// and years of UTC; the import writes window: month and window: year, the
// configuration loads them as calendar limits, reported the same, and the
// month's quota is whole again at the first of the next month, not 30 days
// on.
func TestImportKongCalendarMonth(t *testing.T) {
	src := `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {month: 1000, year: 5000, limit_by: ip}
`
	month, tr, yaml := importedLimit(t, migrate.FormatKong, src, "per-month")
	if !strings.Contains(yaml, "window: month\n") || !strings.Contains(yaml, "window: year\n") {
		t.Errorf("the configuration does not say window: month and window: year:\n%s", yaml)
	}
	if month.Period() != sluice.Month || month.Offset() != 0 || month.Quantity() != 1000 || month.Algorithm() != sluice.AlgorithmFixedWindow {
		t.Errorf("per-month is %v, want a fixed-window 1000 per calendar month of UTC", month)
	}
	year, _, _ := importedLimit(t, migrate.FormatKong, src, "per-year")
	if year.Period() != sluice.Year || year.Offset() != 0 || year.Quantity() != 5000 {
		t.Errorf("per-year is %v, want 5000 per calendar year of UTC", year)
	}
	for _, p := range []string{"month", "year"} {
		if !hasDifference(tr, true, p+": Kong counts calendar "+p+"s of UTC") {
			t.Errorf("the %s is not reported the same", p)
		}
		if hasDifference(tr, false, p+": ") {
			t.Errorf("the %s is reported as a difference", p)
		}
	}
	if !strings.Contains(tr.Report(), "fixed-window 1000 per calendar month (UTC)") {
		t.Error("the report does not state the calendar month")
	}

	// February 2026 has 28 days: the whole quota spent on its last
	// moment, the next is refused until March 1, midnight UTC, and
	// admitted then.
	var s sluice.State
	times := make([]time.Time, 1000)
	for i := range times {
		times[i] = utc(2026, time.February, 28, 23, 59, 59, 0)
	}
	s, got := spend(month, s, times...)
	for i, ok := range got {
		if !ok {
			t.Fatalf("request %d of 1000 in February refused", i)
		}
	}
	_, got = spend(month, s, utc(2026, time.February, 28, 23, 59, 59, 999999), utc(2026, time.March, 1, 0, 0, 0, 0))
	if got[0] || !got[1] {
		t.Errorf("Feb 28 23:59:59.999999 admitted %v (want refused), Mar 1 00:00 admitted %v (want admitted)", got[0], got[1])
	}
}

// TestImportAPIGatewayCalendarWeek: a WEEK quota's offset names the
// weekday its weeks start on (0: Sunday … 6: Saturday); offset 0's quota is
// whole again exactly at Sunday's midnight UTC.
func TestImportAPIGatewayCalendarWeek(t *testing.T) {
	for offset, day := range []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"} {
		src := `{"id": "w", "name": "Weekly", "quota": {"limit": 3, "offset": ` + itoa(int64(offset)) + `, "period": "WEEK"}}`
		l, tr, yaml := importedLimit(t, migrate.FormatAPIGateway, src, "quota-per-week")
		// sluice's weeks start on Monday: Sunday is 6 days after.
		want := time.Duration((offset+6)%7) * 24 * time.Hour
		if l.Period() != sluice.Week || l.Offset() != want || l.Quantity() != 3 {
			t.Errorf("offset %d: %v, want 3 per week offset %v", offset, l, want)
		}
		if !strings.Contains(yaml, "window: week\n") || !strings.Contains(yaml, "starts: "+day+"\n") {
			t.Errorf("offset %d: the configuration does not say window: week, starts: %s:\n%s", offset, day, yaml)
		}
		if !hasDifference(tr, true, "per calendar week of UTC from "+strings.ToUpper(day[:1])+day[1:]) {
			t.Errorf("offset %d: the week is not reported the same", offset)
		}
	}

	l, _, _ := importedLimit(t, migrate.FormatAPIGateway, `{"id": "w", "name": "Weekly", "quota": {"limit": 3, "offset": 0, "period": "WEEK"}}`, "quota-per-week")
	// 2026-03-01 is a Sunday. The quota spent on Saturday's last moment;
	// Sunday's midnight is a new week (under weeks from Monday, or 7-day
	// windows from the epoch's Thursday, it is not).
	sat := utc(2026, time.February, 28, 23, 59, 59, 999999)
	sun := utc(2026, time.March, 1, 0, 0, 0, 0)
	s, got := spend(l, sluice.State{}, sat, sat, sat, sat)
	if !got[0] || !got[1] || !got[2] || got[3] {
		t.Fatalf("Saturday: admitted %v, want the first 3", got)
	}
	_, st := storetest.Decided(l.Decide(s, sluice.MicrosSinceEpoch(sat), 1))
	if st.RetryAfter != time.Microsecond {
		t.Errorf("Saturday's last moment: retry after %v, want 1µs (Sunday's midnight)", st.RetryAfter)
	}
	s, got = spend(l, s, sun, sun, sun, sun)
	if !got[0] || !got[1] || !got[2] || got[3] {
		t.Fatalf("Sunday midnight: admitted %v, want the first 3 (a new week)", got)
	}
	// Spent for the week from Sunday, March 1: refused until Sunday,
	// March 8, through Monday (the start of a week from Monday).
	nextSat, nextSun := utc(2026, time.March, 7, 23, 59, 59, 999999), utc(2026, time.March, 8, 0, 0, 0, 0)
	_, got = spend(l, s, utc(2026, time.March, 2, 0, 0, 0, 0), utc(2026, time.March, 5, 0, 0, 0, 0), nextSat, nextSun)
	if got[0] || got[1] || got[2] || !got[3] {
		t.Errorf("Mon, Thu, Sat 23:59:59.999999, Sun 00:00: admitted %v, want only Sunday", got)
	}
}

// TestImportAPIGatewayCalendarMonth: a MONTH quota of offset 14 counts
// months from the 15th at midnight UTC.
func TestImportAPIGatewayCalendarMonth(t *testing.T) {
	l, tr, yaml := importedLimit(t, migrate.FormatAPIGateway, `{"id": "m", "name": "Monthly", "quota": {"limit": 2, "offset": 14, "period": "MONTH"}}`, "quota-per-month")
	if l.Period() != sluice.Month || l.Offset() != 14*24*time.Hour || l.Quantity() != 2 {
		t.Errorf("%v, want 2 per month offset 336h", l)
	}
	if !strings.Contains(yaml, "window: month\n") || !strings.Contains(yaml, "starts: 15\n") {
		t.Errorf("the configuration does not say window: month, starts: 15:\n%s", yaml)
	}
	if !hasDifference(tr, true, "per calendar month of UTC from the 15th") {
		t.Error("the month is not reported the same")
	}
	if !strings.Contains(tr.Report(), "fixed-window 2 per calendar month (UTC) from the 15th") {
		t.Error("the report does not state the month from the 15th")
	}
	// Spent on January 20: still spent on February 1 (a month from the
	// 1st would be new) and at the last moment of February 14; whole
	// again at February 15, midnight UTC.
	jan := utc(2026, time.January, 20, 12, 0, 0, 0)
	s, got := spend(l, sluice.State{}, jan, jan, jan)
	if !got[0] || !got[1] || got[2] {
		t.Fatalf("January 20: admitted %v, want the first 2", got)
	}
	_, got = spend(l, s, utc(2026, time.February, 1, 0, 0, 0, 0), utc(2026, time.February, 14, 23, 59, 59, 999999),
		utc(2026, time.February, 15, 0, 0, 0, 0))
	if got[0] || got[1] || !got[2] {
		t.Errorf("Feb 1, Feb 14 23:59:59.999999, Feb 15 00:00: admitted %v, want only Feb 15", got)
	}
	// Offset 0: months from the 1st, no starts written.
	l, _, yaml = importedLimit(t, migrate.FormatAPIGateway, `{"id": "m", "name": "Monthly", "quota": {"limit": 2, "offset": 0, "period": "MONTH"}}`, "quota-per-month")
	if l.Period() != sluice.Month || l.Offset() != 0 || strings.Contains(yaml, "starts:") {
		t.Errorf("offset 0: %v, want 2 per month from the 1st, and no starts:\n%s", l, yaml)
	}
}

// TestImportAPIGatewayOffsetOutOfRange: an offset that names no weekday, or
// no day every month has, imports the quota as offset 0's and reports it.
func TestImportAPIGatewayOffsetOutOfRange(t *testing.T) {
	for _, c := range []struct {
		period string
		offset int64
		name   string
		off    time.Duration
		phrase string
	}{
		{"WEEK", 7, "quota-per-week", 6 * 24 * time.Hour, "offset 7 names no weekday"},
		{"WEEK", -1, "quota-per-week", 6 * 24 * time.Hour, "offset -1 names no weekday"},
		{"MONTH", 28, "quota-per-month", 0, "offset 28 names no day from the 1st to the 28th"},
		{"MONTH", -1, "quota-per-month", 0, "offset -1 names no day from the 1st to the 28th"},
	} {
		src := `{"id": "q", "name": "Q", "quota": {"limit": 5, "offset": ` + itoa(c.offset) + `, "period": "` + c.period + `"}}`
		l, tr, _ := importedLimit(t, migrate.FormatAPIGateway, src, c.name)
		if l.Offset() != c.off {
			t.Errorf("%s offset %d: %v, want offset %v", c.period, c.offset, l, c.off)
		}
		if !hasDifference(tr, false, c.phrase) {
			t.Errorf("%s offset %d: no difference reports %q", c.period, c.offset, c.phrase)
		}
		if hasDifference(tr, true, "per calendar") {
			t.Errorf("%s offset %d: reported the same", c.period, c.offset)
		}
	}
}
