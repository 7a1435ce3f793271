package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/degrade"
)

// The surfaces that shed requests: the values of sluice_shed_requests_total's
// via label, and of a shed's log line.
const (
	shedViaProxy       = "proxy"
	shedViaForwardAuth = "forward-auth"
	shedViaDecisionAPI = "decision-api"
)

// shedCounters count the requests a degraded level refused before any
// decision (state.shed): sluice_shed_requests_total{via,level}. A shed
// request is never decided, so sluice_decisions_total never sees it.
type shedCounters struct{ vec *prometheus.CounterVec }

func newShedCounters(reg prometheus.Registerer) shedCounters {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_shed_requests_total",
		Help: "Requests a degraded level refused before deciding them (503, or forward-auth's deny status; the decision API's allowed:false), by surface (via: proxy, forward-auth, decision-api) and level (elevated, high, critical).",
	}, []string{"via", "level"})
	reg.MustRegister(vec)
	for _, via := range []string{shedViaProxy, shedViaForwardAuth, shedViaDecisionAPI} {
		for _, l := range []degrade.Level{degrade.Elevated, degrade.High, degrade.Critical} {
			vec.WithLabelValues(via, l.String())
		}
	}
	return shedCounters{vec}
}

// count counts one request shed by via at level.
func (c shedCounters) count(via string, level degrade.Level) {
	c.vec.WithLabelValues(via, level.String()).Inc()
}
