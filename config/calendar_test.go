package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
)

// A limit's window may be a calendar period, in a zone and from a start
// day of its own; each becomes the calendar limit it says.
func TestCalendarWindows(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`
plans:
  free:
    limits:
      - {name: monthly, algorithm: fixed-window, quantity: 10000, window: month}
      - {name: tokyo-monthly, algorithm: fixed-window, quantity: 10, window: month, zone: "+09:00", starts: 15}
      - {name: weekly, algorithm: fixed-window, quantity: 10, window: week, starts: Sunday, zone: "-05:30"}
      - {name: daily, algorithm: fixed-window, quantity: 10, window: day, zone: UTC}
      - {name: yearly, algorithm: fixed-window, quantity: 10, window: year}
      - {name: thirty-days, algorithm: fixed-window, quantity: 10, window: 30d}
`))
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	want := []struct {
		period sluice.Period
		offset time.Duration
	}{
		{sluice.Month, 0},
		{sluice.Month, 14*day - 9*time.Hour},
		{sluice.Week, 6*day + 5*time.Hour + 30*time.Minute},
		{sluice.Day, 0},
		{sluice.Year, 0},
		{0, 0},
	}
	limits := c.Policy.Plans[0].Limits
	for i, w := range want {
		l := limits[i]
		if l.Err() != nil || l.Period() != w.period || l.Offset() != w.offset || l.Algorithm() != sluice.AlgorithmFixedWindow {
			t.Errorf("%v: period %v offset %v (err %v), want %v offset %v", l, l.Period(), l.Offset(), l.Err(), w.period, w.offset)
		}
	}
	if limits[5].Window() != 30*day {
		t.Errorf("30d is %v", limits[5].Window())
	}
}

func TestCalendarErrorsNameTheirPlace(t *testing.T) {
	limit := func(fields string) string {
		return "plans:\n  free:\n    limits:\n      - {name: m, quantity: 10, " + fields + "}\n"
	}
	for _, c := range []struct{ yaml, want string }{
		{limit("algorithm: gcra, window: month"), `bad.yaml:4:58: plans.free.limits[0].window: a calendar month applies only to fixed-window, not gcra`},
		{limit("algorithm: fixed-window, window: 1h, zone: \"+01:00\""), `bad.yaml:4:76: plans.free.limits[0].zone: applies only to a calendar window`},
		{limit("algorithm: fixed-window, window: month, zone: Europe/Paris"), `plans.free.limits[0].zone: "Europe/Paris" is not a zone: use UTC or a fixed offset`},
		{limit("algorithm: fixed-window, window: month, zone: \"+15:00\""), `"+15:00" is not a zone`},
		{limit("algorithm: fixed-window, window: month, starts: 29"), `plans.free.limits[0].starts: "29" is not a day from 1 to 28`},
		{limit("algorithm: fixed-window, window: week, starts: someday"), `plans.free.limits[0].starts: "someday" is not a weekday`},
		{limit("algorithm: fixed-window, window: year, starts: 2"), `plans.free.limits[0].starts: applies only to a week (a weekday) or a month (a day from 1 to 28), not a year`},
		{limit("algorithm: fixed-window, window: fortnight"), `"fortnight" is not a duration`},
	} {
		_, err := config.Parse("bad.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\nerror: %v\nwant it to contain: %s", c.yaml, err, c.want)
		}
	}
}
