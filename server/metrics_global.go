package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// globalPeekTimeout bounds the store call of one scrape's reading of the
// global limits.
const globalPeekTimeout = time.Second

// globalRemaining exports sluice_global_remaining_ratio: for each global
// limit of the configuration in force (the reduced one while degraded),
// the share of its burst that remains, read when Prometheus scrapes it.
// For a bucket the store leases from Redis, that burst is its shared one
// (httplimit.Middleware.Stated), the most it admits at once, and the peek
// reads the shared state by the limit it decides by, so a spent bucket
// reads 0 and a full one 1: Options.OverLimit, the cache in front of Redis
// alone, is given that limit; the Store, whose leases decide a leased
// bucket by it themselves (redis.Leased), the limit as configured.
//
// An alert on it (SluiceGlobalLimitNearExhaustion takes the lowest of the
// fleet's instances) and the rules that tell the global limits by it need
// every global limit to have a series from the start, at 1 while nothing
// has touched it, and a value that follows the shared state on an instance
// no request reaches: a ratio kept from the last admission would stay low
// on an idle instance, and fire, long after the limit refilled. So each
// scrape reads the state itself with one peek (checks of cost 0, which
// consume nothing) of all the global limits, on the store the fleet shares
// and never on a local fallback, bounded by globalPeekTimeout; at most
// maxScrapes scrapes run at once. While the store cannot answer, the
// series are absent for that scrape rather than stale.
type globalRemaining struct {
	s    *Server
	desc *prometheus.Desc
}

func newGlobalRemaining(s *Server) *globalRemaining {
	return &globalRemaining{s: s, desc: prometheus.NewDesc("sluice_global_remaining_ratio",
		"Share of each global limit's burst (a leased bucket's: its shared burst) left, read from the store at each scrape (1: untouched or refilled, 0: exhausted); absent while the store cannot be read.",
		[]string{"limit"}, nil)}
}

// Describe implements prometheus.Collector.
func (g *globalRemaining) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

// Collect implements prometheus.Collector.
func (g *globalRemaining) Collect(ch chan<- prometheus.Metric) {
	st := g.s.state.Load()
	if st == nil {
		return
	}
	mw := st.deciderAt(g.s.ctl.Level())
	key, limits, err := mw.SubjectLimits(httplimit.GlobalSubject, "")
	if err != nil || len(limits) == 0 {
		return
	}
	checks := make([]sluice.Check, len(limits))
	for i, l := range limits {
		checks[i] = sluice.Check{Key: key, Limit: l} // cost 0: a peek
		if g.s.shared != g.s.limiter {
			checks[i].Limit = mw.Stated(l)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), globalPeekTimeout)
	defer cancel()
	var d sluice.Decision
	if err := g.s.allowShared(ctx, checks, &d); err != nil {
		return
	}
	seen := make(map[string]bool, len(limits))
	for i, l := range limits {
		b := mw.Stated(l).Burst()
		if seen[l.Name()] || b <= 0 {
			continue // one series a name, as the registry requires
		}
		seen[l.Name()] = true
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue,
			float64(d.Statuses[i].Remaining)/float64(b), l.Name())
	}
}
