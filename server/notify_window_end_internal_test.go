package server

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// TestWindowEndIsTheLimitsBoundaryNearestToTheStoresEnd: the end a
// notification names is the boundary of the limit's windows nearest to
// the decision's time plus the store's ResetAfter, whichever side of it
// the host's clock puts that sum — a multiple of the window from
// sluice.Epoch, the calendar's (with its offset) for a calendar limit —
// as long as the host is within half a window of the store.
func TestWindowEndIsTheLimitsBoundaryNearestToTheStoresEnd(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		limit      sluice.Limit
		seen, want string
	}{
		{sluice.FixedWindow(3, time.Minute), "2026-11-30T12:01:00.6Z", "2026-11-30T12:01:00Z"},
		{sluice.FixedWindow(3, time.Minute), "2026-11-30T12:00:59.4Z", "2026-11-30T12:01:00Z"},
		{sluice.FixedWindow(3, time.Minute), "2026-11-30T12:01:29Z", "2026-11-30T12:01:00Z"},
		{sluice.FixedWindow(3, 90*time.Second), "2020-01-01T00:03:01Z", "2020-01-01T00:03:00Z"},
		{sluice.FixedWindow(3, time.Minute), "2019-12-31T23:58:59.5Z", "2019-12-31T23:59:00Z"},
		{sluice.Calendar(10, sluice.Month), "2026-12-31T23:59:58Z", "2027-01-01T00:00:00Z"},
		{sluice.Calendar(10, sluice.Month), "2027-01-01T00:00:02Z", "2027-01-01T00:00:00Z"},
		{sluice.Calendar(10, sluice.Month).WithOffset(-9 * time.Hour), "2026-12-31T15:00:01Z", "2026-12-31T15:00:00Z"},
		{sluice.Calendar(10, sluice.Week), "2026-12-06T23:59:59Z", "2026-12-07T00:00:00Z"},
	} {
		if got := windowEnd(c.limit, at(c.seen)); !got.Equal(at(c.want)) {
			t.Errorf("%s, seen %s: end %s, want %s", c.limit.Name(), c.seen, got.Format(time.RFC3339Nano), c.want)
		}
	}
}

// TestEnvoySubjectTextEscapesOnlyWhatIsNotUTF8: a byte that is not part
// of UTF-8 is written '%' and two hex digits; UTF-8 text, U+FFFD itself
// included, is kept as it is.
func TestEnvoySubjectTextEscapesOnlyWhatIsNotUTF8(t *testing.T) {
	for s, want := range map[string]string{
		"envoy:api:api_key=k1":       "envoy:api:api_key=k1",
		"envoy:api:h=bot-\ufffd é":   "envoy:api:h=bot-\ufffd é",
		"envoy:api:h=bot-\xff\xfe":   "envoy:api:h=bot-%FF%FE",
		"envoy:api:h=%25\xc3|u=\xe9": "envoy:api:h=%25%C3|u=%E9",
	} {
		if got := envoySubjectText(s); got != want {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
	}
}
