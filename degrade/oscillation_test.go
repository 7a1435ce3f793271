package degrade_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// A load that swings around a level's Enter threshold, every other
// reading above it, enters the level once and holds it: a reading below
// Leave starts no step down until a whole dwell of them. When the load
// ends the level steps down one level per dwell, this reading included,
// so from Critical it is Normal 3 dwells and 3 intervals after at most:
// each step's calm starts at the first reading after it.
func TestALoadAroundAThresholdDoesNotFlapAndItsEndIsLeftInTime(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	var changes []degrade.Level
	c := degrade.NewController(rules(), clk.now, func(_, to degrade.Level, _ string) { changes = append(changes, to) })
	const interval = time.Second
	for i := range 120 {
		load := int64(99) // around Elevated's 100, above its Leave (60)
		if i%2 == 0 {
			load = 101
		}
		c.Update(degrade.Signals{InFlight: load})
		clk.advance(interval)
	}
	for i := range 120 {
		load := int64(30) // around Elevated's Leave: below it only now and then
		if i%4 == 0 {
			load = 61
		}
		c.Update(degrade.Signals{InFlight: load})
		clk.advance(interval)
	}
	if len(changes) != 1 || c.Level() != degrade.Elevated {
		t.Fatalf("levels entered %v, at %v: want Elevated once, held", changes, c.Level())
	}
	c.Update(degrade.Signals{InFlight: 500})
	end := clk.t
	for c.Level() != degrade.Normal && clk.t.Sub(end) < time.Minute {
		clk.advance(interval)
		c.Update(degrade.Signals{})
	}
	if took, most := clk.t.Sub(end), 3*(rules().MinDwell+interval); took > most {
		t.Errorf("Critical to Normal took %v after the load ended, want at most %v", took, most)
	}
	if want := []degrade.Level{degrade.Elevated, degrade.Critical, degrade.High, degrade.Elevated, degrade.Normal}; len(changes) != len(want) {
		t.Errorf("levels entered %v, want %v", changes, want)
	}
}

// A reload (SetConfig) keeps an operator's pin, whatever its rules say,
// and its thresholds decide from the next reading: lowered, they enter a
// level at once; raised, the level is left after a dwell.
func TestAReloadKeepsThePinAndAppliesItsThresholdsAtOnce(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	c := degrade.NewController(rules(), clk.now, nil)
	c.Pin(degrade.High)
	lower := rules()
	lower.Rules[0].Enter.InFlight, lower.Rules[0].Leave.InFlight = 10, 5
	c.SetConfig(lower)
	clk.advance(time.Minute)
	if l := c.Update(degrade.Signals{}); l != degrade.High || !c.State().Pinned {
		t.Fatalf("after a reload: %v, pinned %v; want High, pinned", l, c.State().Pinned)
	}
	c.Unpin()
	c.Update(degrade.Signals{InFlight: 50}) // below High's Leave, above the new Elevated's
	clk.advance(5 * time.Second)
	if l := c.Update(degrade.Signals{InFlight: 50}); l != degrade.Elevated {
		t.Fatalf("unpinned, a dwell calm for High: %v, want Elevated", l)
	}
	c.SetConfig(rules()) // Elevated's threshold back at 100: 50 is calm
	for range 6 {        // a dwell from the first calm reading after the step
		clk.advance(time.Second)
		c.Update(degrade.Signals{InFlight: 50})
	}
	if l := c.Level(); l != degrade.Normal {
		t.Errorf("a dwell after the reload raised the threshold above the load: %v, want Normal", l)
	}
	c.SetConfig(lower)
	if l := c.Update(degrade.Signals{InFlight: 50}); l != degrade.Elevated {
		t.Errorf("the reading after a reload lowered the threshold below the load: %v, want Elevated", l)
	}
}
