package envoy

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A give-back's receipt names the store's window, found from the peek's
// reset, while the store's clock is less than half a window off the
// service's: on either side of a window's end, ahead or behind.
func TestReceiptNamesTheStoresWindow(t *testing.T) {
	minute := sluice.FixedWindow(5, time.Minute)
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, c := range []struct {
		name           string
		service, store string // the clocks at the peek
		window         string // the store's window's start
	}{
		{"the same clocks", "2026-12-04T10:00:30Z", "2026-12-04T10:00:30Z", "2026-12-04T10:00:00Z"},
		{"the store ahead, past the end", "2026-12-04T10:00:59.9Z", "2026-12-04T10:01:00.1Z", "2026-12-04T10:01:00Z"},
		{"the store behind, before the end", "2026-12-04T10:01:00.1Z", "2026-12-04T10:00:59.9Z", "2026-12-04T10:00:00Z"},
		{"the store 29 s behind", "2026-12-04T10:01:10Z", "2026-12-04T10:00:41Z", "2026-12-04T10:00:00Z"},
	} {
		store := at(c.store)
		end := store.Truncate(time.Minute).Add(time.Minute)
		got := receipt(minute, at(c.service), end.Sub(store))
		start := sluice.MicrosSinceEpoch(at(c.window))
		if got < start || got >= start+int64(time.Minute/time.Microsecond) {
			t.Errorf("%s: receipt %v, want in the window from %s", c.name, sluice.TimeFromMicros(got), c.window)
		}
	}
}
