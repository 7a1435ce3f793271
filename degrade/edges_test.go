package degrade_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// Pin takes any Level: one above Critical pins Critical, one below Normal
// pins Normal, and the controller goes on deciding (it panicked indexing
// the rules by the level).
func TestPinOutOfRangeIsClampedToTheLevels(t *testing.T) {
	for _, tc := range []struct {
		pin, want degrade.Level
	}{
		{degrade.Critical + 1, degrade.Critical},
		{degrade.Level(1 << 20), degrade.Critical},
		{degrade.Normal - 1, degrade.Normal},
	} {
		c := &clock{t: time.Unix(1000, 0)}
		ctl := degrade.NewController(rules(), c.now, nil)
		ctl.Pin(tc.pin)
		if got := ctl.Level(); got != tc.want {
			t.Errorf("Pin(%v): level %v, want %v", tc.pin, got, tc.want)
		}
		if got := ctl.Update(degrade.Signals{InFlight: 10}); got != tc.want {
			t.Errorf("Pin(%v) then Update: %v, want %v", tc.pin, got, tc.want)
		}
		ctl.Unpin()
		c.advance(time.Minute)
		ctl.Update(degrade.Signals{InFlight: 10})
		if got := ctl.State(); got.Level < degrade.Normal || got.Level > degrade.Critical || got.Pinned {
			t.Errorf("Pin(%v), Unpin, Update: state %+v", tc.pin, got)
		}
	}
}

// P99 is the nearest-rank 99th percentile, the ⌈0.99·n⌉-th smallest
// latency, as SchedP99 is: of 100 answers, the 99th. One slow answer in a
// hundred (1%) is not the p99.
func TestMonitorP99IsTheNearestRank(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	m := degrade.NewMonitorWith(degrade.MonitorConfig{Clock: c.now})
	const slow = 200 * time.Millisecond
	end := m.Begin()
	c.advance(slow)
	end(200)
	for range 99 {
		m.Begin()(200)
	}
	if s := m.Sample(); s.P99 != 0 {
		t.Errorf("p99 of 99 immediate answers and one of %v: %v, want the 99th smallest, an immediate one (0)", slow, s.P99)
	}
	end = m.Begin()
	c.advance(slow)
	end(200)
	for range 98 {
		m.Begin()(200)
	}
	if s := m.Sample(); s.P99 != slow {
		t.Errorf("p99 of 98 immediate answers and one of %v: %v, want the slow one (the 99th smallest of 99)", slow, s.P99)
	}
}

// A failure known only after its answer started (Failed: a long gRPC
// stream's status, in its trailers) may come windows after the answer was
// counted. It still counts in the window it comes in, and the error rate
// stays a share, in [0, 1]: it was 0 in a window without new answers (the
// failure lost) and above 1 in one with fewer answers than late failures.
func TestMonitorLateFailuresCountAndTheRateStaysAShare(t *testing.T) {
	m := degrade.NewMonitor(nil)
	for range 3 {
		m.Begin()(200) // three streams' answers start
	}
	m.Sample()
	m.Failed() // the first stream's status arrives: it failed
	if s := m.Sample(); s.ErrorRate != 1 {
		t.Errorf("a window whose only outcome is a failure: error rate %v, want 1", s.ErrorRate)
	}
	m.Begin()(200)
	m.Failed()
	m.Failed() // the two other streams failed too
	if s := m.Sample(); s.ErrorRate <= 0 || s.ErrorRate > 1 {
		t.Errorf("a window of one answer and two late failures: error rate %v, want a share in (0, 1]", s.ErrorRate)
	}
}

// A clock that steps back (a wall clock set back, a clock read from
// elsewhere) shortens no hold and lengthens none by the step: the level's
// dwell and its calm count from the time the clock went back to, so a
// level is left MinDwell after it, not once the clock has caught up an
// hour later.
func TestClockSteppingBackHoldsTheLevelMinDwellNotTheStep(t *testing.T) {
	c := &clock{t: time.Unix(10_000, 0)}
	ctl := degrade.NewController(rules(), c.now, nil)
	if got := ctl.Update(degrade.Signals{InFlight: 120}); got != degrade.Elevated {
		t.Fatalf("enter: %v", got)
	}
	c.advance(-time.Hour)
	calm := degrade.Signals{InFlight: 10}
	if got := ctl.Update(calm); got != degrade.Elevated {
		t.Fatalf("just after the step back: %v, want Elevated (its dwell restarts)", got)
	}
	c.advance(4 * time.Second)
	if got := ctl.Update(calm); got != degrade.Elevated {
		t.Fatalf("4s after the step back: %v, want Elevated (MinDwell is 5s)", got)
	}
	c.advance(time.Second)
	if got := ctl.Update(calm); got != degrade.Normal {
		t.Errorf("MinDwell of calm after the step back: %v, want Normal", got)
	}

	// A step back while calm: the calm counts from the new time.
	ctl = degrade.NewController(rules(), c.now, nil)
	ctl.Update(degrade.Signals{InFlight: 120})
	c.advance(10 * time.Second)
	ctl.Update(degrade.Signals{InFlight: 110}) // held, not calm
	c.advance(time.Second)
	ctl.Update(calm) // calm from here
	c.advance(-time.Hour)
	for i := range 5 {
		if got := ctl.Update(calm); got != degrade.Elevated {
			t.Fatalf("%ds of calm after a step back: %v, want Elevated", i, got)
		}
		c.advance(time.Second)
	}
	if got := ctl.Update(calm); got != degrade.Normal {
		t.Errorf("MinDwell of calm after a step back: %v, want Normal", got)
	}
}
