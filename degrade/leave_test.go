package degrade_test

import (
	"math"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// A Leave threshold that cannot hold a level its Enter threshold entered
// — not a number, negative, or above Enter — counts as Enter, as a zero
// one does: a signal that stays at its Enter value holds the level. It
// disabled the signal for leaving (or let it leave above Enter), so the
// level was left after MinDwell and entered again at the next reading,
// every MinDwell, for as long as the load lasted.
func TestALeaveThresholdThatCannotHoldCountsAsEnter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leave degrade.Thresholds
	}{
		{"NaN", degrade.Thresholds{CPU: math.NaN(), ErrorRate: math.NaN()}},
		{"negative", degrade.Thresholds{CPU: -0.5, InFlight: -1, P99: -time.Second, ErrorRate: -1}},
		{"above enter", degrade.Thresholds{CPU: 0.95, InFlight: 200, P99: time.Hour, ErrorRate: 0.9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, load := range []degrade.Signals{
				{CPU: 0.85},
				{InFlight: 150},
				{P99: 2 * time.Second, Answers: 100},
				{ErrorRate: 0.5, Answers: 100},
			} {
				c := &clock{t: time.Unix(1000, 0)}
				cfg := degrade.Config{MinDwell: 5 * time.Second}
				cfg.Rules[0] = degrade.Rule{
					Enter: degrade.Thresholds{CPU: 0.8, InFlight: 100, P99: time.Second, ErrorRate: 0.2},
					Leave: tc.leave,
				}
				var changes int
				ctl := degrade.NewController(cfg, c.now, func(_, _ degrade.Level, _ string) { changes++ })
				for range 60 {
					ctl.Update(load)
					c.advance(time.Second)
				}
				if got := ctl.Level(); got != degrade.Elevated || changes != 1 {
					t.Errorf("load %+v held for a minute: level %v after %d transitions, want Elevated after 1", load, got, changes)
				}
			}
		})
	}
}

// A signal that is not a number or is negative counts as 0: it enters no
// level, and at a level it counts as below the Leave thresholds.
func TestNaNAndNegativeSignalsCountAsZero(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	cfg := degrade.Config{MinDwell: 5 * time.Second}
	cfg.Rules[0].Enter = degrade.Thresholds{CPU: 0.8, Memory: 0.8, ErrorRate: 0.2, P99: time.Second, InFlight: 10}
	ctl := degrade.NewController(cfg, c.now, nil)
	odd := degrade.Signals{CPU: math.NaN(), Memory: -1, ErrorRate: math.NaN(), P99: -time.Hour, InFlight: -5, Answers: 100}
	if got := ctl.Update(odd); got != degrade.Normal {
		t.Fatalf("NaN and negative signals entered %v", got)
	}
	ctl.Update(degrade.Signals{CPU: 0.9})
	for range 6 { // calm from the first: MinDwell after it
		c.advance(time.Second)
		ctl.Update(odd)
	}
	if got := ctl.Level(); got != degrade.Normal {
		t.Errorf("after MinDwell of NaN and negative signals: %v, want Normal", got)
	}
}

// A negative MinDwell is the default dwell, as a zero one is: it held no
// level at all, so a level was left at the first reading below its Leave
// thresholds, and its calm never had to last.
func TestNegativeMinDwellIsTheDefault(t *testing.T) {
	for _, set := range []string{"NewController", "SetConfig"} {
		c := &clock{t: time.Unix(1000, 0)}
		cfg := degrade.Config{MinDwell: -time.Second}
		cfg.Rules[0] = degrade.Rule{Enter: degrade.Thresholds{InFlight: 100}, Leave: degrade.Thresholds{InFlight: 50}}
		ctl := degrade.NewController(degrade.Config{}, c.now, nil)
		if set == "NewController" {
			ctl = degrade.NewController(cfg, c.now, nil)
		} else {
			ctl.SetConfig(cfg)
		}
		ctl.Update(degrade.Signals{InFlight: 150})
		for i := range 5 {
			c.advance(time.Second)
			if got := ctl.Update(degrade.Signals{InFlight: 10}); got != degrade.Elevated {
				t.Fatalf("%s: %ds after entering, calm: %v, want Elevated held the default 5s", set, i+1, got)
			}
		}
		c.advance(time.Second)
		if got := ctl.Update(degrade.Signals{InFlight: 10}); got != degrade.Normal {
			t.Errorf("%s: after the default dwell of calm: %v, want Normal", set, got)
		}
	}
}
