package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/redis"
)

// registerLeaseMetrics exports what the quota leased from Redis did (nil:
// nothing is leased, nothing is exported). The mean lease size is
// rate(sluice_lease_units_total{event="leased"}) ÷ rate(sluice_lease_takes_total).
func registerLeaseMetrics(reg prometheus.Registerer, l *redis.Leased) {
	if l != nil {
		reg.MustRegister(newLeaseCollector(l))
	}
}

// leaseCollector reads the leases' counts at each scrape.
type leaseCollector struct {
	l                                                                    *redis.Leased
	units, takes, prefetches, decisions, roundTrips, giveBacks, failures *prometheus.Desc
	held, keys, taking                                                   *prometheus.Desc
}

func newLeaseCollector(l *redis.Leased) *leaseCollector {
	return &leaseCollector{l: l,
		units: prometheus.NewDesc("sluice_lease_units_total",
			"Units of leased quota by event: leased (taken beyond their checks' own cost), spent without a round trip, returned to Redis, expired unspent, lost (unspent when Redis lost the state that counted them, or a reset of their key forgot it: neither spent nor given back).",
			[]string{"event"}, nil),
		takes: prometheus.NewDesc("sluice_lease_takes_total", "Leases taken from Redis.", nil, nil),
		prefetches: prometheus.NewDesc("sluice_lease_prefetches_total",
			"Takes started in the background at a lease's low water, while the lease before still covered calls: no call waited for them.", nil, nil),
		decisions: prometheus.NewDesc("sluice_lease_decisions_total",
			"Calls through the leasing store, by where they were decided: local (from leases alone) or redis.", []string{"path"}, nil),
		roundTrips: prometheus.NewDesc("sluice_lease_round_trips_total", "Calls to Redis for decisions: takes and exact decisions.", nil, nil),
		giveBacks:  prometheus.NewDesc("sluice_lease_give_backs_total", "Runs giving unspent units back to Redis (one per batch of keys).", nil, nil),
		failures: prometheus.NewDesc("sluice_lease_failures_total",
			"Takes and give-back runs Redis failed (an error, or no answer within the store's timeout); a failed take's checks are decided by the failover.", nil, nil),
		held:   prometheus.NewDesc("sluice_lease_units_held", "Units of the leases held now, not yet spent or given back.", nil, nil),
		keys:   prometheus.NewDesc("sluice_lease_keys", "Keys and limits with a lease held now.", nil, nil),
		taking: prometheus.NewDesc("sluice_lease_takes_in_flight", "Takes running now: sent to Redis, not yet answered.", nil, nil),
	}
}

func (c *leaseCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.units, c.takes, c.prefetches, c.decisions, c.roundTrips, c.giveBacks, c.failures, c.held, c.keys, c.taking} {
		ch <- d
	}
}

func (c *leaseCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.l.Stats()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(c.units, st.Leased, "leased")
	counter(c.units, st.Spent, "spent")
	counter(c.units, st.Returned, "returned")
	counter(c.units, st.Expired, "expired")
	counter(c.units, st.Lost, "lost")
	counter(c.takes, st.Leases)
	counter(c.prefetches, st.Prefetches)
	counter(c.decisions, st.Local, "local")
	counter(c.decisions, st.Calls-st.Local, "redis")
	counter(c.roundTrips, st.RoundTrips)
	counter(c.giveBacks, st.GiveBacks)
	counter(c.failures, st.Failures)
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(st.Held))
	ch <- prometheus.MustNewConstMetric(c.keys, prometheus.GaugeValue, float64(st.Keys))
	ch <- prometheus.MustNewConstMetric(c.taking, prometheus.GaugeValue, float64(st.Taking))
}
