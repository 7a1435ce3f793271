package memory

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A limit's states refuse their clients (rank as refusing, see rankState)
// for its longest window after its latest enforcing check, however seldom
// its time is written: an enforcing check within a second of the time
// noted writes nothing, yet counts. A shadow check counts for nothing, a
// clock that steps back never shortens the span, and the longest window
// is that of the enforcing checks noted when the parameter sets kept are
// shorter. A state no kept set can have written refuses while the limit
// was ever enforced.
func TestAnEnforcingCheckCountsForAWindowAfterIt(t *testing.T) {
	us := func(d time.Duration) int64 { return int64(d / time.Microsecond) }
	hour, day := us(time.Hour), us(24*time.Hour)
	t0 := sluice.MicrosSinceEpoch(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	hourly := sluice.FixedWindow(1, time.Hour).Named("trial")
	shadow := hourly.WithShadow(true)
	daily := sluice.FixedWindow(1, 24*time.Hour).Named("trial")

	var lr limitRef
	lr.noteMode(&shadow, t0)
	if lr.enforcing(t0, hour) || lr.enforcing(t0, -1) {
		t.Fatal("a limit decided only in shadow mode refuses clients")
	}
	lr.noteMode(&hourly, t0)
	lr.noteMode(&hourly, t0+us(999*time.Millisecond)) // within a second: nothing written
	lr.noteMode(&hourly, t0-hour)                     // a clock stepped back
	for _, c := range []struct {
		name   string
		at     int64
		window int64
		want   bool
	}{
		{"a window after the latest enforcing check", t0 + us(999*time.Millisecond) + hour, hour, true},
		{"a window and 3s after the latest noted", t0 + hour + us(3*time.Second), hour, false},
		{"before the time noted (the clock stepped back)", t0 - hour, hour, true},
		{"a state no kept set can have written, a day on", t0 + day, -1, true},
	} {
		if got := lr.enforcing(c.at, c.window); got != c.want {
			t.Errorf("%s: enforcing=%v, want %v", c.name, got, c.want)
		}
	}
	lr.noteMode(&daily, t0+hour) // parameters the store may not keep
	if !lr.enforcing(t0+2*hour, hour) {
		t.Error("an hour after an enforcing check of a daily limit, with only hourly sets kept: not enforcing")
	}
}
