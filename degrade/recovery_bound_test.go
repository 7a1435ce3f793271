package degrade_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// Once the load ends, a level steps down one level per step of min_dwell
// rounded up to whole intervals plus one interval, the calm counted from
// the sample after the previous step (docs/operations.md): Critical to
// Normal within 3 × (⌈min_dwell/interval⌉ + 1) intervals, which is
// 3 × (min_dwell + interval) when interval divides min_dwell, and never
// more than 3 × (min_dwell + 2 × interval).
func TestRecoveryWithinTheDocumentedBound(t *testing.T) {
	for _, interval := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second} {
		clk := &clock{t: time.Unix(1e9, 0)}
		c := degrade.NewController(rules(), clk.now, nil)
		c.Update(degrade.Signals{InFlight: 500}) // Critical
		for range 10 {                           // held well past its dwell
			clk.advance(interval)
			c.Update(degrade.Signals{InFlight: 500})
		}
		end := clk.t // the load ends right after this sample
		for c.Level() != degrade.Normal && clk.t.Sub(end) < time.Hour {
			clk.advance(interval)
			c.Update(degrade.Signals{})
		}
		dwell := rules().MinDwell
		steps := (dwell + interval - 1) / interval // min_dwell in whole intervals
		if took, want := clk.t.Sub(end), 3*(steps+1)*interval; took != want {
			t.Errorf("interval %v, min_dwell %v: Critical to Normal took %v after the load ended, want 3 × (%d + 1) intervals = %v",
				interval, dwell, took, steps, want)
		}
		if took, most := clk.t.Sub(end), 3*(dwell+2*interval); took > most {
			t.Errorf("interval %v, min_dwell %v: Critical to Normal took %v, more than 3 × (min_dwell + 2 × interval) = %v", interval, dwell, took, most)
		}
		if took, most := clk.t.Sub(end), 3*(dwell+interval); dwell%interval == 0 && took > most {
			t.Errorf("interval %v, min_dwell %v: Critical to Normal took %v, more than 3 × (min_dwell + interval) = %v", interval, dwell, took, most)
		}
	}
}
