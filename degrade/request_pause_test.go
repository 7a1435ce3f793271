package degrade_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// A request's latency is the time from Start to its End less its pauses
// (the proxy's waits on the client's body): overlapping pauses stand it
// still once, a pause open at End ends there, and Resume without a Pause,
// or either after End, changes nothing.
func TestARequestsPausesAreNotItsLatency(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	m := degrade.NewMonitorWith(degrade.MonitorConfig{Clock: c.now})
	r := m.Start()
	c.advance(100 * time.Millisecond) // the upstream's: counted
	r.Resume()                        // no pause open: nothing
	r.Pause()
	c.advance(time.Second) // the client's
	r.Pause()              // overlapping
	c.advance(time.Second)
	r.Resume()
	c.advance(time.Second) // the first pause still open
	r.Resume()
	c.advance(200 * time.Millisecond) // the upstream's
	r.Pause()
	c.advance(time.Second) // open at End
	r.End(200)
	r.Pause()
	r.Resume()
	if s := m.Sample(); s.P99 != 300*time.Millisecond || s.Answers != 1 || s.InFlight != 0 {
		t.Errorf("300ms of the upstream's between 4s of pauses: p99 %v of %d answers, %d in flight; want 300ms of 1, 0",
			s.P99, s.Answers, s.InFlight)
	}
}
