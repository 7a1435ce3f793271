package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/httplimit"
)

// exemptCounters count exempt requests by why they are exempt:
// sluice_exempt_requests_total{reason}. Exempt requests are never decided,
// so sluice_decisions_total never sees them.
type exemptCounters map[string]prometheus.Counter

func newExemptCounters(reg prometheus.Registerer) exemptCounters {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_exempt_requests_total",
		Help: "Requests no limit applied to, never counted against any quota, by reason: route, address, key, user, plan.",
	}, []string{"reason"})
	reg.MustRegister(vec)
	c := exemptCounters{}
	for _, r := range []string{httplimit.ExemptRoute, httplimit.ExemptAddress, httplimit.ExemptKey, httplimit.ExemptUser, httplimit.ExemptPlan} {
		c[r] = vec.WithLabelValues(r)
	}
	return c
}

// count is the middleware's OnExempt.
func (c exemptCounters) count(_ *http.Request, reason string) {
	if ctr := c[reason]; ctr != nil {
		ctr.Inc()
	}
}
