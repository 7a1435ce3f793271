package calendartext

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

func TestNoteSaysWhenTheQuotaIsWholeAgain(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		l    sluice.Limit
		want string
	}{
		{sluice.Calendar(1, sluice.Month), "counted per calendar month, whole again on the 1st at 00:00 UTC"},
		{sluice.Calendar(1, sluice.Month).WithOffset(14*day - 9*time.Hour), "counted per calendar month, whole again on the 15th at 00:00 UTC+09:00"},
		{sluice.Calendar(1, sluice.Month).WithOffset(time.Hour + 2*day), "counted per calendar month, whole again on the 3rd at 00:00 UTC-01:00"},
		{sluice.Calendar(1, sluice.Week).WithOffset(6*day + 5*time.Hour + 30*time.Minute), "counted per calendar week, whole again on Sunday at 00:00 UTC-05:30"},
		{sluice.Calendar(1, sluice.Week), "counted per calendar week, whole again on Monday at 00:00 UTC"},
		{sluice.Calendar(1, sluice.Day).WithOffset(-14 * time.Hour), "counted per calendar day, whole again every day at 00:00 UTC+14:00"},
		{sluice.Calendar(1, sluice.Year), "counted per calendar year, whole again on January 1 at 00:00 UTC"},
		{sluice.Calendar(1, sluice.Month).WithOffset(21 * day), "counted per calendar month, whole again on the 22nd at 00:00 UTC"},
		// zone -12:00, start 28: named at +12:00 it would be the 29th, which February lacks
		{sluice.Calendar(1, sluice.Month).WithOffset(27*day + 12*time.Hour), "counted per calendar month, whole again on the 28th at 00:00 UTC-12:00"},
		{sluice.Calendar(1, sluice.Week).WithOffset(-2 * day), "counted per calendar week, whole again on Saturday at 00:00 UTC"},
		{sluice.Calendar(1, sluice.Month).WithOffset(-day), "counted per calendar month, whole again on the last day of the month at 00:00 UTC"},
		{sluice.Calendar(1, sluice.Month).WithOffset(-3*day - 9*time.Hour), "counted per calendar month, whole again on the 3rd-to-last day of the month at 00:00 UTC+09:00"},
		{sluice.Calendar(1, sluice.Year).WithOffset(-2 * day), "counted per calendar year, whole again on the 2nd-to-last day of the year at 00:00 UTC"},
		{sluice.Calendar(1, sluice.Year).WithOffset(31 * day), "counted per calendar year, whole again on day 32 of the year at 00:00 UTC"},
		// named at +11:00 it would be day 366, which a year of 365 days lacks
		{sluice.Calendar(1, sluice.Year).WithOffset(364*day + 13*time.Hour), "counted per calendar year, whole again on day 365 of the year at 00:00 UTC-13:00"},
	} {
		if c.l.Err() != nil {
			t.Fatal(c.l.Err())
		}
		if got := Note(c.l); got != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.l, got, c.want)
		}
	}
}
