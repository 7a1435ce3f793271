package degrade_test

import (
	"testing"

	"github.com/sluice-dev/sluice/degrade"
)

// The zero Controller has no rules and stays at Normal unless pinned; the
// zero Monitor measures as NewMonitor(nil)'s does. Neither panics.
func TestZeroControllerAndMonitor(t *testing.T) {
	var c degrade.Controller
	if l := c.Update(degrade.Signals{InFlight: 1 << 30, ErrorRate: 1}); l != degrade.Normal {
		t.Errorf("Update of the zero Controller: %v, want Normal", l)
	}
	c.Pin(degrade.High)
	if l := c.Update(degrade.Signals{}); l != degrade.High || !c.State().Pinned {
		t.Errorf("pinned: %v %+v, want High, pinned", l, c.State())
	}
	c.Unpin()
	c.Reset()
	if l := c.Level(); l != degrade.Normal {
		t.Errorf("after Reset: %v", l)
	}
	var m degrade.Monitor
	end := m.Begin()
	if m.InFlight() != 1 {
		t.Errorf("in flight: %d, want 1", m.InFlight())
	}
	end(200)
	m.Failed() // a gRPC answer's failure, known after it started
	if s := m.Sample(); s.InFlight != 0 || s.ErrorRate != 1 {
		t.Errorf("Sample: %+v, want nothing in flight and an error rate of 1", s)
	}
}

// The zero Controller holds a level it was pinned to for the default
// MinDwell (5s) after Unpin, as NewController's does: it does not step
// down at the next reading.
func TestZeroControllerHoldsTheDefaultDwell(t *testing.T) {
	var c degrade.Controller
	c.Pin(degrade.High)
	c.Unpin()
	if l := c.Update(degrade.Signals{}); l != degrade.High {
		t.Fatalf("first reading after Unpin: %v, want High held for the default dwell", l)
	}
}
