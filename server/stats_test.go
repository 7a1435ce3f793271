package server

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// refusal is a request of plan refused by its one limit, named limit.
func refusal(plan, limit string) *httplimit.Result {
	return &httplimit.Result{
		Identity: httplimit.Identity{Kind: httplimit.KindIP, Subject: "ip:192.0.2.1", Plan: &httplimit.Plan{Name: plan}},
		Checks:   []sluice.Check{{Limit: sluice.PerMinute(1).Named(limit)}},
		Decision: sluice.Decision{Statuses: []sluice.Status{{}}},
	}
}

// inRange returns the counts of each range of st.
func inRange(st *stats) map[string]dashboardData {
	out := map[string]dashboardData{}
	for _, rg := range dashboardRanges {
		out[rg.name] = st.snapshot(rg, 10)
	}
	return out
}

// A refusal stays in each range for as long as the range lasts, and in the
// totals for ever; the by-limit counts follow it.
func TestStatsRangesForgetWhatIsOlderThanThem(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := newStats(func() time.Time { return now }, nil)
	st.record(refusal("free", "per-minute"))
	steps := []struct {
		after time.Duration
		want  map[string]int64 // refusals in range
	}{
		{0, map[string]int64{"1m": 1, "15m": 1, "1h": 1}},
		{59 * time.Second, map[string]int64{"1m": 1, "15m": 1, "1h": 1}},
		{60 * time.Second, map[string]int64{"1m": 0, "15m": 1, "1h": 1}},
		{14*time.Minute + 50*time.Second, map[string]int64{"1m": 0, "15m": 1, "1h": 1}},
		{15 * time.Minute, map[string]int64{"1m": 0, "15m": 0, "1h": 1}},
		{59*time.Minute + 30*time.Second, map[string]int64{"1m": 0, "15m": 0, "1h": 1}},
		{60 * time.Minute, map[string]int64{"1m": 0, "15m": 0, "1h": 0}},
		{5 * time.Hour, map[string]int64{"1m": 0, "15m": 0, "1h": 0}},
	}
	start := now
	for _, s := range steps {
		now = start.Add(s.after)
		for name, d := range inRange(st) {
			var limitInRange int64
			if len(d.Limits) == 1 {
				limitInRange = d.Limits[0].InRange
			}
			if d.InRange.Refused != s.want[name] || limitInRange != s.want[name] || d.Totals.Refused != 1 {
				t.Errorf("%v later, range %s: %d refused in range (by limit %d), %d in total; want %d and 1",
					s.after, name, d.InRange.Refused, limitInRange, d.Totals.Refused, s.want[name])
			}
			if len(d.Series) == 0 || d.Series[len(d.Series)-1].At > now.Unix() || now.Unix()-d.Series[len(d.Series)-1].At >= d.Step {
				t.Errorf("%v later, range %s: the last point does not hold now", s.after, name)
			}
		}
	}
}

// The store's counters are counted in the slot where they are sampled, and
// a degradation level holds in the points after it until another is seen.
func TestStatsSamplesStoreAndLevel(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var cur sample
	st := newStats(func() time.Time { return now }, func() sample { return cur })
	cur = sample{storeErrors: 2, fallback: 5, level: 2}
	st.record(refusal("free", "per-minute")) // samples the second
	now = now.Add(10 * time.Second)
	cur.fallback = 7
	d := st.snapshot(dashboardRanges[0], 10) // samples again
	if d.Totals.Fallback != 7 || d.InRange.Fallback != 7 || d.Totals.StoreErrors != 2 {
		t.Errorf("fallback %d in total, %d in range, store errors %d; want 7, 7, 2", d.Totals.Fallback, d.InRange.Fallback, d.Totals.StoreErrors)
	}
	n := len(d.Series)
	for i, p := range d.Series {
		want := -1 // before the first sample: not known
		if i >= n-11 {
			want = 2
		}
		if p.Level != want {
			t.Errorf("point %d (%ds before now): level %d, want %d", i, n-1-i, p.Level, want)
		}
	}
	if last := d.Series[n-1]; last.Fallback != 2 || d.Series[n-11].Fallback != 5 {
		t.Errorf("fallback now %d, 10 s ago %d; want 2 and 5", last.Fallback, d.Series[n-11].Fallback)
	}
}

func TestDashboardDataRefusesUnknownRanges(t *testing.T) {
	if _, ok := findRange("2h"); ok {
		t.Error("2h is a range")
	}
	for _, name := range []string{"", "1m", "15m", "1h"} {
		if _, ok := findRange(name); !ok {
			t.Errorf("%q is not a range", name)
		}
	}
}

// A degradation level reached and left while nothing was decided and no one
// polled the dashboard is drawn in the seconds it held: each change of
// level is marked where it happens, not only when a decision or a poll
// samples it.
func TestStatsDrawALevelHeldWhileNothingHappened(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cur := sample{level: 0}
	st := newStats(func() time.Time { return now }, func() sample { return cur })
	st.record(refusal("free", "per-minute")) // level 0 seen at 12:00:00
	now = now.Add(10 * time.Second)
	cur.level = 2
	st.levelChanged(2) // critical at 12:00:10, no traffic
	now = now.Add(20 * time.Second)
	cur.level = 0
	st.levelChanged(0) // back to normal at 12:00:30
	now = now.Add(10 * time.Second)
	d := st.snapshot(dashboardRanges[0], 10) // the 1m range, one point a second
	n := len(d.Series)
	for i, p := range d.Series {
		ago := n - 1 - i
		want := -1 // before the start: not known
		switch {
		case ago <= 10:
			want = 0 // since 12:00:30
		case ago <= 30:
			want = 2 // 12:00:10 to 12:00:29
		case ago <= 40:
			want = 0 // from 12:00:00
		}
		if p.Level != want {
			t.Errorf("point %ds before now: level %d, want %d", ago, p.Level, want)
		}
	}
}
