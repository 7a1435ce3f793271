package degrade_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// A request's latency is the time of the monitor's clock from Begin to its
// end, to the nanosecond, and one whose end the clock reads before its
// start (it went back) is 0, not a negative latency.
func TestMonitorMeasuresLatencyByItsClock(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	m := degrade.NewMonitorWith(degrade.MonitorConfig{Clock: c.now})
	end := m.Begin()
	c.advance(1500 * time.Millisecond)
	end(200)
	if s := m.Sample(); s.P99 != 1500*time.Millisecond || s.Answers != 1 {
		t.Errorf("one answer of 1.5s by the clock: p99 %v of %d answers, want 1.5s of 1", s.P99, s.Answers)
	}
	end = m.Begin()
	c.advance(-time.Hour)
	end(200)
	if s := m.Sample(); s.P99 != 0 || s.Answers != 1 {
		t.Errorf("an answer whose end the clock reads an hour before its start: p99 %v of %d answers, want 0 of 1", s.P99, s.Answers)
	}
}

// Without a clock, the monitor measures on the real one: a request held 1ms
// has a latency of at least 1ms.
func TestMonitorWithoutAClockMeasuresRealTime(t *testing.T) {
	for name, m := range map[string]*degrade.Monitor{
		"NewMonitorWith's zero config": degrade.NewMonitorWith(degrade.MonitorConfig{}),
		"the zero Monitor":             new(degrade.Monitor),
	} {
		end := m.Begin()
		time.Sleep(time.Millisecond)
		end(200)
		if s := m.Sample(); s.P99 < time.Millisecond {
			t.Errorf("%s: p99 %v of an answer held 1ms, want at least 1ms", name, s.P99)
		}
	}
}
