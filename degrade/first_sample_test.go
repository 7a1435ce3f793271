package degrade

import (
	"testing"
	"time"
)

// The CPU share is of a window between two reads: a monitor's first
// window starts when it is made, so its first Sample a window later
// measures the CPU, and a Sample before any window could be measured says
// the share is unknown rather than 0, an idle process's.
func TestTheFirstSampleMeasuresFromTheMonitorsStart(t *testing.T) {
	m := NewMonitor(nil)
	if s := m.Sample(); !s.CPUUnknown {
		t.Errorf("a Sample at once: CPU %v known, want unknown (no window measured yet)", s.CPU)
	}
	m = NewMonitor(nil)
	time.Sleep(minCPUWindow + 20*time.Millisecond)
	if s := m.Sample(); s.CPUUnknown {
		t.Errorf("the first Sample %v after the monitor was made: CPU unknown, want measured over that window", minCPUWindow+20*time.Millisecond)
	}
}
