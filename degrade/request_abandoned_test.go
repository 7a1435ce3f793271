package degrade

import (
	"testing"
	"time"
)

// A request ended Abandoned (its client gave up before the upstream
// answered) is a latency of the window's P99, and counts toward the
// latencies P99 needs to count, but no answer: neither a success nor a
// failure of the error rate.
func TestAnAbandonedRequestIsALatencyAndNoOutcome(t *testing.T) {
	now := time.Unix(0, 0)
	m := NewMonitorWith(MonitorConfig{Clock: func() time.Time { return now }})
	m.Sample()
	for range 100 {
		r := m.Start()
		now = now.Add(600 * time.Millisecond)
		r.End(Abandoned)
	}
	r := m.Start()
	r.End(500)
	s := m.Sample()
	if s.Abandoned != 100 || s.Answers != 1 || s.Failures != 1 || s.ErrorRate != 1 || s.P99 != 600*time.Millisecond || s.InFlight != 0 {
		t.Fatalf("100 abandoned after 600ms, one failure at once: %+v; want 100 abandoned, 1 answer, 1 failure, error rate 1, p99 600ms", s)
	}
	if got := counted(s, 20); got.P99 != s.P99 || got.ErrorRate != 0 {
		t.Errorf("counted of 1 answer and 100 abandoned, min 20: p99 %v, error rate %v; want the p99 counted (101 latencies), the error rate not (1 outcome)",
			got.P99, got.ErrorRate)
	}
}
