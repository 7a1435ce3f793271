package server

import (
	"testing"
	"time"
)

// A point of a range that ended before the stats were made (the server
// started) is not known, -1 in every count, so that the dashboard draws
// no line there instead of an hour of no traffic; the points from the
// start on count as usual, zeros included.
func TestStatsPointsBeforeTheStartAreNotKnown(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 5, 0, time.UTC)
	now := start
	st := newStats(func() time.Time { return now }, nil)
	st.record(refusal("free", "per-minute"))
	now = start.Add(2 * time.Minute)
	for _, rg := range dashboardRanges {
		d := st.snapshot(rg, 10)
		known := 0
		for _, p := range d.Series {
			before := p.At+d.Step <= start.Unix()
			if before && (p.Decisions != -1 || p.Refused != -1 || p.Undecided != -1 || p.StoreErrors != -1 || p.Fallback != -1 || p.Level != -1) {
				t.Errorf("range %s: the point at %v, before the start, is %+v; want -1 throughout", rg.name, time.Unix(p.At, 0).UTC(), p)
			}
			if !before {
				known++
				if p.Decisions < 0 || p.Refused < 0 {
					t.Errorf("range %s: the point at %v, after the start, is %+v", rg.name, time.Unix(p.At, 0).UTC(), p)
				}
			}
		}
		if known == 0 || known == len(d.Series) && rg.name != "1m" {
			t.Errorf("range %s: %d points of %d known, two minutes after the start", rg.name, known, len(d.Series))
		}
		if want := map[string]int64{"1m": 0, "15m": 1, "1h": 1}[rg.name]; d.InRange.Refused != want || d.InRange.Decisions != want {
			t.Errorf("range %s: in range %+v, want %d decisions and refusals", rg.name, d.InRange, want)
		}
	}
}
