package server

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// metrics are sluice's Prometheus series (README, The server). Label values come from
// the configuration (plan and limit names), never from clients, so their
// number is bounded.
type metrics struct {
	decisions *prometheus.CounterVec
	counters  decisionCounters // decisions' children, looked up once
	seconds   prometheus.Histogram
	nearLimit prometheus.Counter
	// fallbackRequests counts the requests of seconds (decided, not
	// undecided) that the failover's on_store_error rule decided: one at
	// most per request, however many store calls its decision made
	// (sluice_fallback_decisions_total counts those calls).
	fallbackRequests prometheus.Counter
	// sluice_global_remaining_ratio is read at each scrape: see
	// globalRemaining.
	undecided   prometheus.Counter
	degradation prometheus.Gauge
	transitions *prometheus.CounterVec
	reloads     *prometheus.CounterVec
	// reloadOK is 1 while the configuration on disk is the one serving
	// (the last reload, or the start, succeeded), 0 after a refusal;
	// reloadTime is when the configuration serving was loaded.
	reloadOK, reloadTime prometheus.Gauge
	// configInfo is 1 for the digest of the configuration in force
	// (configDigest): instances of one fleet serving different digests
	// have drifted apart.
	configInfo *prometheus.GaugeVec
	// refusedCallers counts requests to the private listeners refused for
	// want of a scope (401 and 403), by the scope they lacked.
	refusedCallers *prometheus.CounterVec
	// shedConnections counts idle connections closed to make room for new
	// ones, by listener (public, admin, envoy).
	shedConnections *prometheus.CounterVec
	// proxyHeaderRefusals counts connections of proxy_protocol peers
	// refused for a missing or malformed PROXY header.
	proxyHeaderRefusals prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_decisions_total",
			Help: "Decisions per plan (policy) and limit (for the Envoy service, per domain and rule): allowed (the request was admitted), limited (this limit refused it), shadow (this shadow limit would have refused it), unlimited (an Envoy rule with unlimited: true admitted it, counting nothing), unavailable (refused because the store could not be reached, by on_store_error: deny: no limit refused it).",
		}, []string{"policy", "limit", "result"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sluice_decision_seconds",
			Help: "Time to decide one request (all its limits, one store call).",
			// From 5 µs (a decision in memory) to 5 s, beyond the
			// store.redis.timeout a decision waits for: a quantile of
			// slow decisions (a Redis answering late, within its
			// timeout) reads as slow as they are, not as the highest
			// bound.
			Buckets: []float64{5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2,
				0.1, 0.25, 0.5, 1, 2.5, 5},
		}),
		fallbackRequests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_fallback_requests_total",
			Help: "Requests decided by on_store_error instead of the store: those during whose decision it decided a call on one of their store nodes (theirs or, erring on the side of counting, another's). At most one per request of sluice_decision_seconds_count, however many store calls its decision made; 0 without a Redis store.",
		}),
		nearLimit: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_near_limit_total",
			Help: "Admitted requests that left some limit with less than 10% of its burst.",
		}),
		undecided: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_undecided_total",
			Help: "Requests no decision could be made for (the store and its failure policy both failed): the proxy and forward-auth served them, the decision API answered 503, the Envoy service UNAVAILABLE. A caller that left before its decision is not counted.",
		}),
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
		reloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_config_last_reload_successful",
			Help: "1 when the last configuration reload (or the start) succeeded, 0 when it was refused and the previous configuration keeps serving.",
		}),
		reloadTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_config_last_reload_success_timestamp_seconds",
			Help: "When the configuration serving was loaded, in seconds since the Unix epoch.",
		}),
		configInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_config_info",
			Help: "1, labelled with the first 12 hex digits of the SHA-256 of the configuration in force (its file, keys file and Envoy rules): instances of one fleet with different digests serve different configurations.",
		}, []string{"sha256"}),
		refusedCallers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_caller_refusals_total",
			Help: "Requests to the private listeners refused (401, 403) by the scope they lacked.",
		}, []string{"scope"}),
		shedConnections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_connections_shed_total",
			Help: "Idle connections closed because their listener reached its connection limit, by listener.",
		}, []string{"listener"}),
		proxyHeaderRefusals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_proxy_header_refusals_total",
			Help: "Connections from a proxy_protocol load balancer refused because they did not start with a valid PROXY header.",
		}),
	}
	m.reloadOK.Set(1)
	m.reloadTime.SetToCurrentTime()
	for _, scope := range []config.Scopes{config.ScopeRead, config.ScopeCheck, config.ScopeOverridePlan, config.ScopeAdmin} {
		m.refusedCallers.WithLabelValues(scope.String()) // at 0 until the first refusal
	}
	reg.MustRegister(m.decisions, m.seconds, m.fallbackRequests, m.nearLimit, m.undecided, m.degradation, m.transitions, m.reloads,
		m.reloadOK, m.reloadTime, m.configInfo, m.refusedCallers, m.shedConnections, m.proxyHeaderRefusals)
	m.counters.with = func(k counterKey) prometheus.Counter {
		return m.decisions.WithLabelValues(k.policy, k.limit, k.result)
	}
	return m
}

// children hands out the children of a metric vector (sluice_decisions_total)
// without WithLabelValues's hashing and
// locking on every decision: a child is looked up once, when its labels are
// first used (as WithLabelValues would create it), and kept in a
// copy-on-write map that readers load without a lock. At most
// maxCachedChildren children are kept (label values come from the
// configuration, so a server rarely has more); beyond, each use goes to
// the vector.
type children[K comparable, C any] struct {
	with   func(K) C // the vector's WithLabelValues for K's labels
	mu     sync.Mutex
	cached atomic.Pointer[map[K]C]
}

const maxCachedChildren = 4096

// get returns the child of k.
func (c *children[K, C]) get(k K) C {
	if m := c.cached.Load(); m != nil {
		if ch, ok := (*m)[k]; ok {
			return ch
		}
	}
	return c.add(k)
}

// add looks the child of k up in the vector and caches it.
func (c *children[K, C]) add(k K) C {
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[K]C
	if p := c.cached.Load(); p != nil {
		old = *p
	}
	if ch, ok := old[k]; ok {
		return ch
	}
	ch := c.with(k)
	if len(old) >= maxCachedChildren {
		return ch
	}
	m := make(map[K]C, len(old)+1)
	maps.Copy(m, old)
	m[k] = ch
	c.cached.Store(&m)
	return ch
}

// counterKey is the labels of one child of sluice_decisions_total.
type counterKey struct{ policy, limit, result string }

// The values of the result label.
const (
	resultAllowed = "allowed"
	resultLimited = "limited"
	resultShadow  = "shadow"
	// resultUnavailable is a check refused by no limit: the store could
	// not be reached and its failover refused (on_store_error: deny; its
	// Status is Unavailable).
	resultUnavailable = "unavailable"
)

// decisionCounters are sluice_decisions_total's children.
type decisionCounters struct {
	children[counterKey, prometheus.Counter]
}

// inc counts one decision of limit under policy with result.
func (d *decisionCounters) inc(policy, limit, result string) {
	d.get(counterKey{policy, limit, result}).Inc()
}

// undecided counts err, a failure to decide, unless its caller left:
// that is no failure of sluice's.
func (s *Server) undecided(err error) {
	if callerLeft(err) {
		return
	}
	s.metrics.undecided.Inc()
	s.stats.recordError()
}

// callerLeft reports whether err, a failure to decide, is its caller's:
// the request's context ended before its decision (the client hung up,
// or its deadline passed: Envoy's timeout, a gRPC call's grpc-timeout).
// The limiter tells so by reading that context, not the error: the Envoy
// service answers such a call Canceled or DeadlineExceeded, any other
// failure Unavailable (or InvalidArgument); a failover.Store returns an
// error wrapping the context's error, never sluice.ErrStoreUnavailable,
// when its caller's context is done, and one wrapping
// sluice.ErrStoreUnavailable when its stores failed, their own timeouts
// included, which are sluice's failures.
func callerLeft(err error) bool {
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return st.Code() == codes.Canceled || st.Code() == codes.DeadlineExceeded
	}
	return !errors.Is(err, sluice.ErrStoreUnavailable) &&
		(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// observe is the middleware's observer: it feeds metrics and the dashboard.
func (s *Server) observe(res *httplimit.Result, took time.Duration, err error) {
	s.observeScaled(res, took, err, 0)
}

// observeScaled is observe for a middleware whose limits of windows up to
// scaledUpTo are a degraded level's reduced ones (0: the configured
// limits): notify does not judge those (notifier.observe).
func (s *Server) observeScaled(res *httplimit.Result, took time.Duration, err error, scaledUpTo time.Duration) {
	var observed time.Time // when the decision had ended: see decidedByFallback
	if s.opts.Failover != nil {
		observed = time.Now()
	}
	s.metrics.seconds.Observe(took.Seconds())
	if err != nil {
		s.undecided(err)
		return
	}
	if s.opts.Failover != nil && s.decidedByFallback(res.Checks, s.decisionAge(res, took, observed)) {
		s.metrics.fallbackRequests.Inc()
	}
	d := &res.Decision
	plan := res.Identity.Plan.Name
	near := false
	for i := range res.Checks {
		l := &res.Checks[i].Limit
		st := &d.Statuses[i]
		switch {
		case st.Unavailable && !st.Allowed:
			s.metrics.counters.inc(plan, l.Name(), resultUnavailable)
		case l.Shadow() && !st.Allowed:
			s.metrics.counters.inc(plan, l.Name(), resultShadow)
		case d.Allowed:
			s.metrics.counters.inc(plan, l.Name(), resultAllowed)
			near = near || st.Remaining*10 < l.Burst()
		case !st.Allowed:
			s.metrics.counters.inc(plan, l.Name(), resultLimited)
		}
	}
	if near && d.Allowed {
		s.metrics.nearLimit.Inc()
	}
	s.stats.record(res)
	if st := s.state.Load(); st != nil && st.notify != nil && !s.fellBack(res.Checks, took) {
		s.notify.observe(st.notify, res, scaledUpTo)
	}
}

// decidedByFallback reports whether a request decided by checks (all
// nodes for none), whose decision began ago, was decided by the
// failover's on_store_error rule: a node of its checks fell back since,
// or within fallbackSlack before. Another request's fallback on the same
// node meanwhile counts as well, so it errs on the side of true (see
// failover.Store.FellBack). Without a failover no decision falls back.
func (s *Server) decidedByFallback(checks []sluice.Check, ago time.Duration) bool {
	return s.opts.Failover != nil && s.opts.Failover.FellBack(checks, ago+fallbackSlack)
}

// decisionAge returns how long ago the decision of res, which took took
// and had ended by observed, was asked for. Without Options.Clock the
// middleware reads res.Now on the monotonic clock as the decision begins,
// and the age is measured from it, so that a pause of this goroutine
// between the middleware's measure of took and observed (the machine
// busy) is counted too; with one, res.Now is that clock's, and the age is
// took and the time since observed.
func (s *Server) decisionAge(res *httplimit.Result, took time.Duration, observed time.Time) time.Duration {
	age := took + time.Since(observed)
	if !s.ownClock && !res.Now.IsZero() {
		age = max(age, time.Since(res.Now))
	}
	return age
}

// fallbackSlack widens the span decidedByFallback asks about: the
// decision's time, as its middleware measures it, can begin after the
// failover stamped the decision's own fallback (by up to ~100 µs in
// tests), which must not be missed.
const fallbackSlack = time.Millisecond

// registerMemoryMetrics exports the counts of the in-process store m (none
// when m is nil), its bound among them
// (memory.WithMaxKeys, config store.max_keys), beside what m holds toward it.
func registerMemoryMetrics(reg prometheus.Registerer, m *memory.Store) {
	if m == nil {
		return
	}
	reg.MustRegister(&memoryCollector{m: m, descs: [...]*prometheus.Desc{
		prometheus.NewDesc("sluice_memory_keys",
			"(key, limit) states the in-process store holds.", nil, nil),
		prometheus.NewDesc("sluice_memory_evictions_total",
			"Live states the in-process store dropped to make room for new keys or a growing sliding log or concurrency limit, the least used first, never one that is refusing.", nil, nil),
		prometheus.NewDesc("sluice_memory_expirations_total",
			"States the in-process store forgot because they were back at full quota.", nil, nil),
		prometheus.NewDesc("sluice_memory_clock_late_ticks_total",
			"Ticks of the in-process store's clock more than two resolutions after the previous one.", nil, nil),
		prometheus.NewDesc("sluice_memory_clock_max_lag_seconds",
			"The most any admission's time has lagged the exact time since start (refusals never lag).", nil, nil),
		prometheus.NewDesc("sluice_memory_no_room_total",
			"Checks refused because their shard of the in-process store was full of refusing states: of new keys, or of a sliding log or concurrency limit that had to grow its array (raise store.max_keys).", nil, nil),
		prometheus.NewDesc("sluice_memory_limits",
			"Distinct limits (by name and algorithm) the in-process store knows; it keeps each while it runs.", nil, nil),
		prometheus.NewDesc("sluice_memory_limits_refused_total",
			"Calls the in-process store could not decide because they named a limit beyond the most it may know.", nil, nil),
		prometheus.NewDesc("sluice_memory_units",
			"What the in-process store holds toward store.max_keys: a unit per (key, limit) state, and one more per 8 entries of room in a sliding log's or concurrency limit's array.", nil, nil),
		prometheus.NewDesc("sluice_memory_max_units",
			"The units the in-process store may hold (store.max_keys at start): new keys and growing logs beyond it evict or are refused.", nil, nil),
	}})
}

// memoryCollector exports an in-process store's Stats, read once per
// scrape for all of its series (Stats counts the keys under every shard's
// mutex). descs are, in order: keys, evictions, expirations, late ticks,
// the clock's largest lag, refusals for room, limits known, calls refused
// for naming one limit too many, units held, and their bound.
type memoryCollector struct {
	m     *memory.Store
	descs [10]*prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.m.Stats()
	d := &c.descs
	ch <- prometheus.MustNewConstMetric(d[0], prometheus.GaugeValue, float64(st.Keys))
	ch <- prometheus.MustNewConstMetric(d[1], prometheus.CounterValue, float64(st.Evictions))
	ch <- prometheus.MustNewConstMetric(d[2], prometheus.CounterValue, float64(st.Expirations))
	ch <- prometheus.MustNewConstMetric(d[3], prometheus.CounterValue, float64(st.ClockLateTicks))
	ch <- prometheus.MustNewConstMetric(d[4], prometheus.GaugeValue, st.ClockMaxLag.Seconds())
	ch <- prometheus.MustNewConstMetric(d[5], prometheus.CounterValue, float64(st.NoRoom))
	ch <- prometheus.MustNewConstMetric(d[6], prometheus.GaugeValue, float64(st.Limits))
	ch <- prometheus.MustNewConstMetric(d[7], prometheus.CounterValue, float64(st.LimitsRefused))
	ch <- prometheus.MustNewConstMetric(d[8], prometheus.GaugeValue, float64(st.Units))
	ch <- prometheus.MustNewConstMetric(d[9], prometheus.GaugeValue, float64(st.MaxUnits))
}

// registerStoreMetrics exports the counters of a remote store's wrappers:
// errors and fallback decisions of the failover, its breaker, and the round
// trips the over-limit cache saved. sluice_store_errors_total is the
// failover's count of the calls its primary failed (decisions, refunds and
// releases) plus direct, the failures of the calls the server made to the
// store past the failover (or, without one, the refunds it failed).
func registerStoreMetrics(reg prometheus.Registerer, f *failover.Store, c *overlimit.Cache, direct *atomic.Int64) {
	if f == nil { // the memory store fails no decision
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sluice_store_errors_total", Help: "Calls the store failed (error or timeout).",
			ConstLabels: prometheus.Labels{"store": "memory"},
		}, func() float64 { return float64(direct.Load()) }))
	}
	if f != nil {
		reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "sluice_store_errors_total", Help: "Calls the store failed (error or timeout).",
				ConstLabels: prometheus.Labels{"store": "redis"},
			}, func() float64 { return float64(f.Stats().StoreErrors + direct.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "sluice_fallback_decisions_total", Help: "Decisions made by on_store_error instead of the store.",
			}, func() float64 { return float64(f.Stats().FallbackDecisions) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "sluice_store_return_refusals_total",
				Help: "Fallback decisions that refused a call by this instance's share while it returned to a store answering again (on_store_error local).",
			}, func() float64 { return float64(f.Stats().ReturnRefusals) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "sluice_store_uncharged_units_total",
				Help: "Units admitted by the local fallback that will not be charged to the store: its ledger was full.",
			}, func() float64 { return float64(f.Stats().Uncharged) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "sluice_store_breaker_open", Help: "1 while the store's circuit breaker is open or probing, else 0. The server probes an open breaker with or without requests, so it follows the store within about the breaker's open time.",
			}, func() float64 {
				if f.Stats().Breaker == failover.BreakerClosed {
					return 0
				}
				return 1
			}),
		)
	}
	if c != nil {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sluice_overlimit_round_trips_saved_total", Help: "Requests refused from remembered denials without asking the store.",
		}, func() float64 { return float64(c.Stats().RoundTripsSaved) }))
	}
}

// inForce marks cfg as the configuration in force (sluice_config_info).
func (m *metrics) inForce(cfg *config.Config) {
	m.configInfo.Reset()
	if d := configDigest(cfg); d != "" {
		m.configInfo.WithLabelValues(d).Set(1)
	}
}
