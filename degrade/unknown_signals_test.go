package degrade_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// An unknown CPU (Signals.CPUUnknown) reaches no threshold whatever its
// value: it neither enters a level nor holds one, and the level is decided
// by the others.
func TestAnUnknownSignalDecidesNothing(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	cfg := degrade.Config{MinDwell: time.Second, Rules: [3]degrade.Rule{
		{Enter: degrade.Thresholds{CPU: 0.8, InFlight: 100}},
	}}
	ctl := degrade.NewController(cfg, c.now, nil)
	if got := ctl.Update(degrade.Signals{CPU: 0.9, CPUUnknown: true}); got != degrade.Normal {
		t.Fatalf("an unknown CPU of 0.9: %v, want Normal", got)
	}
	if got := ctl.Update(degrade.Signals{CPU: 0.9, InFlight: 100, CPUUnknown: true}); got != degrade.Elevated {
		t.Fatalf("an unknown CPU and in-flight at its threshold: %v, want Elevated", got)
	}
	for range 2 {
		c.advance(time.Second)
		ctl.Update(degrade.Signals{CPU: 0.9, CPUUnknown: true})
	}
	if got := ctl.Level(); got != degrade.Normal {
		t.Errorf("in-flight calm for the dwell, CPU unknown: %v, want Normal (the CPU does not hold it)", got)
	}
}
