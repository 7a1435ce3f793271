package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// The reload log says that a calendar moved to another zone or start
// keeps a client's count of the window in progress if its last charge
// falls in the new calendar's window in progress (internal/algo's
// FixedWindow), however far the calendar moved; a change of quantity, or
// of period, is not told so.
func TestStateChangesOfAReloadMovingACalendar(t *testing.T) {
	plan := func(l sluice.Limit) *httplimit.Policy {
		return &httplimit.Policy{Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{l.Named("quota")}}}}
	}
	month := sluice.Calendar(5, sluice.Month)
	day := 24 * time.Hour
	const kept = `a client's count of the %[1]s in progress is kept if its last charge falls in the new calendar's %[1]s in progress, until that %[1]s ends`
	for _, c := range []struct {
		name     string
		old, cur sluice.Limit
		want     string // the only line; "" for none
	}{
		{"a zone west", month, month.WithOffset(5 * time.Hour),
			`plan "free": limit "quota" is whole again on the 1st at 00:00 UTC-05:00, was on the 1st at 00:00 UTC: ` +
				fmt.Sprintf(kept, "month")},
		{"a start", month, month.WithOffset(4 * day),
			`plan "free": limit "quota" is whole again on the 5th at 00:00 UTC, was on the 1st at 00:00 UTC: ` +
				fmt.Sprintf(kept, "month")},
		{"a day's zone across the date line", sluice.Calendar(5, sluice.Day).WithOffset(-14 * time.Hour), sluice.Calendar(5, sluice.Day).WithOffset(14 * time.Hour),
			`plan "free": limit "quota" is whole again every day at 00:00 UTC+10:00, was every day at 00:00 UTC+14:00: ` +
				fmt.Sprintf(kept, "day")},
		{"a month moved 28 days and 4 hours", month.WithOffset(27*day + 14*time.Hour), month.WithOffset(-14 * time.Hour),
			`plan "free": limit "quota" is whole again on the 1st at 00:00 UTC+14:00, was on the 28th at 00:00 UTC-14:00: ` +
				fmt.Sprintf(kept, "month")},
		{"the same calendar", month, sluice.Calendar(9, sluice.Month), ""},
		{"another period", month, sluice.Calendar(5, sluice.Week).WithOffset(5 * time.Hour), ""},
	} {
		got := stateChanges(plan(c.old), plan(c.cur), nil, nil)
		if c.want == "" && len(got) != 0 || c.want != "" && (len(got) != 1 || got[0] != c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
