package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/redis"
)

// registerNodeMetrics exports, for a store with a failover (Redis), each
// node's breaker and counts, labelled by node (a Cluster master's or the
// server's address), what Redis forgot of what it had acknowledged, and
// the reservations it could not refund.
func registerNodeMetrics(reg prometheus.Registerer, f *failover.Store, losses func() redis.Losses, unrefunded func() int64) {
	if f != nil {
		reg.MustRegister(newNodeCollector(f))
	}
	if unrefunded != nil {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sluice_redis_unrefunded_total",
			Help: "Reservations of refused calls spanning Cluster slots that could not be refunded (Redis failed meanwhile): their units stay counted until their windows pass or buckets refill.",
		}, func() float64 { return float64(unrefunded()) }))
	}
	if losses == nil {
		return
	}
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sluice_redis_lost_writes_total",
			Help: "Masters that took over without everything their predecessor had acknowledged, as far as sluice had read the predecessor's replication offset (every 100 ms); each one's decisions since are admitted again.",
		}, func() float64 { return float64(losses().LostWrites) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sluice_redis_empty_restarts_total",
			Help: "Masters seen again at the same address without the data they had (restarted without persistence).",
		}, func() float64 { return float64(losses().EmptyRestarts) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sluice_redis_evicted_keys_total",
			Help: "Keys the Redis masters evicted to make room since the store first saw them (a maxmemory-policy other than noeviction): each evicted limit state gives its client a fresh quota.",
		}, func() float64 { return float64(losses().Evicted) }),
	)
}

// nodeCollector reads the failover's per-node counts at each scrape.
type nodeCollector struct {
	f                                *failover.Store
	breaker, errors, fallback, opens *prometheus.Desc
}

func newNodeCollector(f *failover.Store) *nodeCollector {
	node := []string{"node"}
	return &nodeCollector{f: f,
		breaker: prometheus.NewDesc("sluice_store_node_breaker_open",
			"1 while the node's circuit breaker is open or probing, else 0.", node, nil),
		errors: prometheus.NewDesc("sluice_store_node_errors_total",
			"Calls to the node that failed (error or timeout).", node, nil),
		fallback: prometheus.NewDesc("sluice_store_node_fallback_decisions_total",
			"Calls decided by on_store_error because of the node (failed, breaker open, or returning).", node, nil),
		opens: prometheus.NewDesc("sluice_store_node_breaker_opens_total",
			"Times the node's circuit breaker opened.", node, nil),
	}
}

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.breaker
	ch <- c.errors
	ch <- c.fallback
	ch <- c.opens
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	for node, st := range c.f.Stats().Nodes {
		open := 0.0
		if st.Breaker != failover.BreakerClosed {
			open = 1
		}
		ch <- prometheus.MustNewConstMetric(c.breaker, prometheus.GaugeValue, open, node)
		ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(st.StoreErrors), node)
		ch <- prometheus.MustNewConstMetric(c.fallback, prometheus.CounterValue, float64(st.FallbackDecisions), node)
		ch <- prometheus.MustNewConstMetric(c.opens, prometheus.CounterValue, float64(st.BreakerOpens), node)
	}
}
