package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/httplimit"
)

// metrics are the Prometheus series of DESIGN.md §8. Label values come from
// the configuration (plan and limit names), never from clients, so their
// number is bounded.
type metrics struct {
	decisions   *prometheus.CounterVec
	seconds     prometheus.Histogram
	nearLimit   prometheus.Counter
	storeErrors *prometheus.CounterVec
	degradation prometheus.Gauge
	transitions *prometheus.CounterVec
	reloads     *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_decisions_total",
			Help: "Decisions per plan (policy) and limit: allowed (the request was admitted), limited (this limit refused it), shadow (this shadow limit would have refused it).",
		}, []string{"policy", "limit", "result"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sluice_decision_seconds",
			Help:    "Time to decide one request (all its limits, one store call).",
			Buckets: []float64{5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 5e-2},
		}),
		nearLimit: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_near_limit_total",
			Help: "Admitted requests that left some limit with less than 10% of its burst.",
		}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_store_errors_total",
			Help: "Requests the store could not decide (after its failure policy).",
		}, []string{"store"}),
		degradation: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_degradation_level",
			Help: "Current degradation level: 0 normal, 1 elevated, 2 high, 3 critical.",
		}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_degradation_transitions_total",
			Help: "Degradation level changes, by level left and level entered.",
		}, []string{"from", "to"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_config_reloads_total",
			Help: "Configuration reloads by result (ok, refused).",
		}, []string{"result"}),
	}
	reg.MustRegister(m.decisions, m.seconds, m.nearLimit, m.storeErrors, m.degradation, m.transitions, m.reloads)
	return m
}

// observe is the middleware's observer: it feeds metrics and the dashboard.
func (s *Server) observe(res *httplimit.Result, took time.Duration, err error) {
	s.metrics.seconds.Observe(took.Seconds())
	if err != nil {
		s.metrics.storeErrors.WithLabelValues("store").Inc()
		s.stats.recordError()
		return
	}
	d := &res.Decision
	plan := res.Identity.Plan.Name
	near := false
	for i := range res.Checks {
		l := res.Checks[i].Limit
		st := &d.Statuses[i]
		switch {
		case l.Shadow() && !st.Allowed:
			s.metrics.decisions.WithLabelValues(plan, l.Name(), "shadow").Inc()
		case d.Allowed:
			s.metrics.decisions.WithLabelValues(plan, l.Name(), "allowed").Inc()
			near = near || st.Remaining*10 < l.Burst()
		case !st.Allowed:
			s.metrics.decisions.WithLabelValues(plan, l.Name(), "limited").Inc()
		}
	}
	if near && d.Allowed {
		s.metrics.nearLimit.Inc()
	}
	s.stats.record(res)
}
