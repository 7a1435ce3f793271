package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/degrade"
)

// loadSignals exports the load signals that degradation's levels are set
// against (degrade.Signals; the thresholds of degradation.levels' enter and
// leave), as the sampling loop last read them: every degradation.interval,
// or every second without a degradation section, whose signals are read
// all the same. An operator sets and checks the thresholds against them:
// they are the signals as the controller reads them (Controller.Counted),
// the p99 and error rate 0 of an interval with too few answers for them
// to count (degradation.min_answers; 100 for the p99).
// They are absent before the first sample, and the CPU share is absent
// for a window it could not be measured in (degrade.Signals.CPUUnknown),
// rather than 0, an idle process.
type loadSignals struct {
	s                                  *Server
	inFlight, p99, errorRate, schedP99 *prometheus.Desc
	cpu, memory                        *prometheus.Desc
}

func newLoadSignals(s *Server) *loadSignals {
	return &loadSignals{s: s,
		inFlight: prometheus.NewDesc("sluice_load_in_flight",
			"Requests being served at the last sample (degradation thresholds' in_flight).", nil, nil),
		p99: prometheus.NewDesc("sluice_load_p99_seconds",
			"99th percentile of the latency of the requests answered over the last sampling interval, 0 for fewer answers than degradation.min_answers or 100, which it is not judged over (degradation thresholds' p99).", nil, nil),
		errorRate: prometheus.NewDesc("sluice_load_error_rate",
			"Share of the requests that failed (5xx) over the last sampling interval, 0 for fewer answers than degradation.min_answers, which it is not judged over (degradation thresholds' error_rate).", nil, nil),
		schedP99: prometheus.NewDesc("sluice_load_sched_p99_seconds",
			"99th percentile of the Go scheduler's latency over the last sampling interval (degradation thresholds' sched_p99).", nil, nil),
		cpu: prometheus.NewDesc("sluice_load_cpu_ratio",
			"Share of the CPU the process may use that was used over the last sampling interval; absent while it cannot be measured (degradation thresholds' cpu).", nil, nil),
		memory: prometheus.NewDesc("sluice_load_memory_ratio",
			"Share of the memory limit in use at the last sample, 0 without a limit (degradation thresholds' memory).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (l *loadSignals) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{l.inFlight, l.p99, l.errorRate, l.schedP99, l.cpu, l.memory} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (l *loadSignals) Collect(ch chan<- prometheus.Metric) {
	last := l.s.signals.Load()
	if last == nil {
		return
	}
	sig := l.s.ctl.Counted(*last)
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	gauge(l.inFlight, float64(sig.InFlight))
	gauge(l.p99, sig.P99.Seconds())
	gauge(l.errorRate, sig.ErrorRate)
	gauge(l.schedP99, sig.SchedP99.Seconds())
	if !sig.CPUUnknown {
		gauge(l.cpu, sig.CPU)
	}
	gauge(l.memory, sig.Memory)
}

// noteSignals records sig as the last sample's.
func (s *Server) noteSignals(sig degrade.Signals) { s.signals.Store(&sig) }
