package server

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/httplimit"
)

// reportedCounters count, for the limits that count what the upstream
// reports a request used (count: "header:<Name>"), the units reported and
// the answers that reported none (whose clients keep their whole
// reservation counted): sluice_reported_units_total{limit} and
// sluice_unreported_answers_total{limit}.
type reportedCounters struct {
	units, unreported *prometheus.CounterVec
}

func newReportedCounters(reg prometheus.Registerer) *reportedCounters {
	c := &reportedCounters{
		units: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_reported_units_total",
			Help: "Units the upstream reported its answers used, for the limits that count what it reports (count: header:<Name>).",
		}, []string{"limit"}),
		unreported: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_unreported_answers_total",
			Help: "Answers that reported no usage for a limit that counts what the upstream reports: each kept its whole reservation (its cost) counted.",
		}, []string{"limit"}),
	}
	reg.MustRegister(c.units, c.unreported)
	return c
}

// record is the middleware's OnReported.
func (c *reportedCounters) record(limit string, _, used int64, reported bool) {
	if !reported {
		c.unreported.WithLabelValues(limit).Inc()
		return
	}
	c.units.WithLabelValues(limit).Add(float64(used))
}

// known creates the series of the limits of counts that count what the
// upstream reports, at 0, so that their rates exist before the first
// answer (and stay after a reload removes the limit: a counter is never
// taken back).
func (c *reportedCounters) known(counts map[string]string) {
	for name, count := range counts {
		if strings.HasPrefix(count, httplimit.CountHeader) {
			c.units.WithLabelValues(name)
			c.unreported.WithLabelValues(name)
		}
	}
}
