package degrade_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// Late failures (Failed: long gRPC streams whose upstream died, their
// statuses in their trailers) count in the window they come in, and may
// outnumber its answers. They are outcomes for the error rate, not
// latencies: a window of 3 answers, one slow, and 100 late failures has a
// p99 of 3 latencies, the slowest, which must not count, as a quiet
// window's does not. The error rate of the 100 failures still counts.
func TestLateFailuresDoNotMakeAP99OfFewAnswersCount(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	m := degrade.NewMonitorWith(degrade.MonitorConfig{Clock: c.now})
	slow := m.Begin()
	m.Begin()(200)
	m.Begin()(200)
	c.advance(20 * time.Millisecond)
	slow(200)
	for range 100 {
		m.Failed()
	}
	s := m.Sample()
	if s.P99 != 20*time.Millisecond {
		t.Fatalf("p99 %v of 3 answers, one of 20ms: the test's premise is the slowest", s.P99)
	}

	cfg := degrade.Config{MinAnswers: 1, Rules: [3]degrade.Rule{
		{Enter: degrade.Thresholds{ErrorRate: 0.5}},
		{Enter: degrade.Thresholds{P99: 10 * time.Millisecond}},
	}}
	ctl := degrade.NewController(cfg, c.now, nil)
	if got := ctl.Update(s); got != degrade.Elevated {
		t.Errorf("3 answers (one slow) and 100 late failures: level %v, want Elevated (the error rate), not High (the p99 of 3); signals %+v", got, s)
	}
}
