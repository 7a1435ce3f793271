// Package server wires sluice into one process with two kinds of listener.
//
// The public listener (config listen, ":8080") is the data plane: every
// request goes through the limiter to the upstream (reverse proxy), except
// GET /docs (client documentation) and GET /healthz. No other sluice
// endpoint answers there: a request for /v1/check is proxied like any path.
//
// The admin listener (config admin.listen, "127.0.0.1:9090") is the control
// plane: the decision API, forward-auth for nginx/Traefik/Caddy, /metrics,
// /dashboard, /designer, /v1/degradation, /readyz and /healthz. Its callers
// are identified by a bearer token (stored as its SHA-256), a client
// certificate (mutual TLS) or, for the scopes the configuration grants it,
// a loopback address; each endpoint needs a scope (read, check,
// override_plan, admin). The Envoy rate limit service (gRPC) has a listener
// of its own with the same callers.
//
// Every listener bounds its connections (idle ones are closed first when
// full) and the time of each request. Configuration reloads on request
// (Options.Reloads: the sluice binary's SIGHUP) and on file change; an
// invalid new configuration is refused and the old one keeps serving. The
// package handles no signal and changes no process-wide setting.
package server

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/logsample"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
)

// withConnectionDefaults returns cfg, or a copy of it whose Connections
// bounds left zero (a Config built in Go) are their defaults, as the
// configuration file's would be; cfg itself is never modified.
func withConnectionDefaults(cfg *config.Config) *config.Config {
	if c := cfg.Connections; c.WithDefaults() != c {
		copied := *cfg
		copied.Connections = c.WithDefaults()
		return &copied
	}
	return cfg
}

// Options configures a Server.
type Options struct {
	// Config is the configuration to start with (required). Its
	// Connections bounds that are zero are served as their defaults
	// (config.Connections.WithDefaults); New does not modify it.
	Config *config.Config
	// Load re-reads the configuration on reload; nil disables reloading.
	Load func() (*config.Config, error)
	// WatchFile, when set, reloads when this file changes.
	WatchFile string
	// Reloads, when set (with Load), reloads at each value received, even
	// if no watched file changed: the sluice binary sends one on SIGHUP.
	// The server itself handles no signal.
	Reloads <-chan struct{}
	// Store keeps the limits' state (required). It survives reloads.
	Store sluice.Store
	// Logger receives structured logs; slog.Default() when nil.
	Logger *slog.Logger
	// Clock is the time of headers and bodies; time.Now when nil. Use the
	// store's clock.
	Clock func() time.Time
	// Registry receives the metrics; when nil, a new one that also holds
	// the Go runtime's and the process's (go_memstats_*, go_goroutines,
	// process_resident_memory_bytes, …). A Registry that already holds a
	// metric under one of the server's names (sluice_*, such as another
	// Server's) makes New fail; a New that fails, for any reason, leaves
	// none of its metrics in Registry.
	Registry *prometheus.Registry
	// DrainTimeout bounds graceful shutdown: how long requests in flight
	// get to finish once the listeners close, and notify's queue what
	// remains of it. 0: the configuration's shutdown.drain, 10s by default.
	DrainTimeout time.Duration
	// Ready reports whether the store is reachable; nil: always. /readyz
	// answers 503 while it fails, or while every node of Failover has its
	// breaker open (the store answers its probe but fails its decisions),
	// only under on_store_error deny, which can
	// then only refuse: under local or allow the instance still decides,
	// and taking every instance out of a load balancer while a shared store
	// is down would make its outage the API's. It is called one at a time
	// (probes that arrive meanwhile share the result), with a context of at
	// most 2 s: a store that answers later is not reachable.
	Ready func(ctx context.Context) error
	// StoreDown reports whether the store is failing (a degradation
	// signal); never when nil.
	StoreDown func() bool
	// Failover and OverLimit, when the store has them (Redis), export
	// their counters as metrics; a reload resets the over-limit cache.
	// While it serves, the Server probes Failover's open breakers
	// (failover.Store.RunProbes), so that its state, and a StoreDown read
	// from it, follow the store's with no request.
	Failover  *failover.Store
	OverLimit *overlimit.Cache
	// StoreLosses, when set (Redis), reports what Redis forgot of what it
	// had acknowledged (a failover that lost writes): its counts become
	// metrics.
	StoreLosses func() redis.Losses
	// StoreUnrefunded, when set (Redis), counts the reservations of
	// refused calls spanning Cluster slots that could not be refunded
	// (OpenedStore.Unrefunded): a metric.
	StoreUnrefunded func() int64
	// StoreClientCertificate, when set (Redis with a client certificate),
	// returns the certificate the store's next connection presents and
	// why its files hold no valid pair, if they do not
	// (OpenedStore.ClientCertificate): its expiry becomes a metric.
	StoreClientCertificate func() (*tls.Certificate, error)
	// Leases, when set, is the quota the store leases from Redis: its
	// counts become metrics, and a reload gives back every unit it holds
	// (the new configuration's limits lease afresh). Its lease settings
	// are those of Config's store section (see OpenStore) until the next
	// start: a reload that counts by response (count:) on a limit they
	// lease, or notifies one, is refused (see config.Config.CountsLeasedBy
	// and NotifiedLeasedBy).
	Leases *redis.Leased
	// Memory, when set, is the in-process store (the store itself on
	// memory, the failover's local store on Redis): its counts of keys,
	// units and their bound, evictions and expirations and its clock's lag
	// become metrics.
	Memory *memory.Store
}

// Server is a running sluice. Build it with New; serve with Run or mount
// Handler in your own http.Server. The zero Server serves nothing: Run and
// Serve return an error, its handlers answer 503, Config is nil, and Close
// does nothing.
type Server struct {
	opts Options
	// tlsListeners are the listeners serving TLS, where certExpiry reads
	// what each serves.
	tlsListeners tlsListeners
	ownClock     bool // the caller set Options.Clock
	log          *slog.Logger
	limiter      *sluice.Limiter
	// shared decides on the store every instance shares and nothing else:
	// the over-limit cache around Redis when there is one (an error when
	// Redis cannot decide, never a local fallback), else the store.
	shared   *sluice.Limiter
	metrics  *metrics
	exempt   exemptCounters
	shed     shedCounters
	reported *reportedCounters
	pending  *pendings // the decision API's decisions to settle
	tokens   *tokenSource
	notify   *notifier // notify:'s poster
	settles  settleCounters
	stats    *stats
	state    atomic.Pointer[state]
	reloads  sync.Mutex
	public   http.Handler // the public listener's
	admin    http.Handler // the admin listener's
	ctl      *degrade.Controller
	mon      *degrade.Monitor
	// signals are the load signals of the last sample (loadSignals).
	signals atomic.Pointer[degrade.Signals]
	// switched are the proxy's connections switched to another protocol
	// (WebSockets), which Serve closes when it stops.
	switched *switchedConns
	// refusals bounds the log lines of refused requests.
	refusals refusalLog
	// serverErrors bounds the log lines of the HTTP servers' own errors,
	// upstreamFailures those of requests the upstream failed.
	serverErrors, upstreamFailures *boundedWarnings
	// warnings bounds the warnings a failing store repeats per request of
	// the decision API, forward-auth and settle: each message at most once
	// per logsample.Interval, the next line counting those left out.
	warnings logsample.Log
	// crossOrigin tells a browser's cross-site requests (callerOf).
	crossOrigin *http.CrossOriginProtection
	// envoy is the Envoy rate limit service, with a configuration that has
	// an envoy section; its rules swap on reload.
	envoy     *envoy.Service
	envoyAddr atomic.Pointer[string]
	// checks pools the decision API's per-request memory (checkScratch).
	checks sync.Pool
	// designer runs the designer's simulations within their limits.
	designer *designer
	// draining is set once Serve has been told to stop: /readyz answers
	// 503 from then on.
	draining atomic.Bool
	// ready probes Options.Ready for /readyz; nil without.
	ready *readyProbe
	// loaded is the digest of the watched files the configuration in force
	// was read from (WatchFile only; see watchSet.digest), as it read them
	// (config.Config.Read), kept by the watcher: at its start it reloads if
	// a file changed since it was read, and it does not reload files
	// rewritten as they were.
	loaded [sha256.Size]byte
	// storeErrors counts the store's failures that no failover counts: the
	// calls of allowShared when shared is past the failover, and the
	// refunds of POST /v1/settle when there is no failover.
	storeErrors atomic.Int64
}

// state is everything derived from one configuration; swapped whole on reload.
type state struct {
	cfg   *config.Config
	mw    *httplimit.Middleware
	proxy http.Handler
	// closeIdle closes the proxy's idle connections to the upstream, nil
	// for the demo upstream: each state has a transport of its own.
	closeIdle func()
	// upstreamTLS is the proxy's TLS configuration to the upstream (nil
	// without upstream_tls), where certExpiry reads what it presents.
	upstreamTLS *tls.Config
	docs        *docsPage
	// With a degradation section: limits × factor, classes, stale cache.
	degrade      *degradeState
	reducedProxy http.Handler
	stale        *staleCache
	// notify is the notify section's rules, nil without one.
	notify     *notifyRules
	envoyRules *envoy.Rules
	// access identifies the callers of the private listeners.
	access *access
	// cors lets browser origins read the public listener's answers; nil
	// without response.cors.
	cors *corsPolicy
	// TLS of each listener, nil without; certificates follow reloads.
	publicTLS, adminTLS, envoyTLS *tls.Config
	// served settles the verifier of identity.jwt once the state is served
	// (true) or dropped (false): see tokenSource.verifierFor.
	served func(bool)
	// namesHost is namesHost(cfg): whether forward-auth warns of a request
	// without X-Forwarded-Host.
	namesHost bool
	// namesMethod is namesMethod(cfg): whether the proxy reads a POST's
	// _method (paramOverride).
	namesMethod bool
}

// New builds a Server from opts.
func New(opts Options) (*Server, error) {
	if opts.Config == nil || opts.Store == nil {
		return nil, errors.New("server: Config and Store are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Config = withConnectionDefaults(opts.Config)
	ownClock := opts.Clock != nil
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
		opts.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	s := &Server{opts: opts, ownClock: ownClock, log: opts.Logger, limiter: sluice.NewLimiter(opts.Store),
		crossOrigin: http.NewCrossOriginProtection()}
	s.shared = s.limiter
	s.serverErrors = newBoundedWarnings(s.log, "server errors not logged")
	s.upstreamFailures = newBoundedWarnings(s.log, "upstream failures not logged")
	if opts.OverLimit != nil {
		s.shared = sluice.NewLimiter(opts.OverLimit)
	}
	s.checks.New = newCheckScratch
	if opts.Ready != nil {
		s.ready = &readyProbe{ready: opts.Ready, log: s.log}
	}
	// Metrics go through reg, which gives back what it registered if New
	// fails: a Registry that already holds one of their names is an error.
	reg := &registerer{to: opts.Registry}
	s.metrics = newMetrics(reg)
	s.exempt = newExemptCounters(reg)
	s.shed = newShedCounters(reg)
	s.reported = newReportedCounters(reg)
	s.settles = newSettleCounters(reg)
	s.pending = newPendings(time.Now, s.settles.dropped.Inc)
	s.tokens = &tokenSource{s: s, metrics: newTokenMetrics(reg)}
	s.notify = newNotifier(reg)
	registerBuildInfo(reg)
	registerStoreMetrics(reg, opts.Failover, opts.OverLimit, &s.storeErrors)
	registerNodeMetrics(reg, opts.Failover, opts.StoreLosses, opts.StoreUnrefunded)
	registerLeaseMetrics(reg, opts.Leases)
	registerMemoryMetrics(reg, opts.Memory)
	reg.MustRegister(newGlobalRemaining(s), newCertExpiry(s), newLoadSignals(s))
	s.stats = newStats(opts.Clock, s.dashboardSample)
	g := opts.Config.Designer
	s.designer = newDesigner(designerLimits{concurrency: g.Concurrency, maxArrivals: g.MaxArrivals, timeout: g.Timeout})
	s.mon = degrade.NewMonitor(opts.StoreDown)
	s.switched = newSwitchedConns()
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sluice_proxy_switched_connections",
		Help: "Connections the reverse proxy switched to another protocol (WebSockets) open now.",
	}, func() float64 { return float64(s.switched.len()) }))
	s.ctl = degrade.NewController(opts.Config.Degradation.Controller, nil, s.levelChanged)
	if reg.err != nil {
		reg.undo()
		return nil, fmt.Errorf("server: registering its metrics: %w", reg.err)
	}
	st, err := s.build(opts.Config)
	if err != nil {
		reg.undo()
		return nil, err
	}
	if st.envoyRules != nil {
		if s.envoy, err = s.newEnvoyService(opts.Config, st.envoyRules); err != nil {
			st.served(false)
			reg.undo()
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	s.state.Store(st)
	st.served(true)
	s.inForce(st)
	s.public, s.admin = s.publicRoutes(), s.adminRoutes()
	if opts.WatchFile != "" {
		s.loaded = s.watchSet(namedFiles{}).digestAs(opts.Config.Read)
	}
	return s, nil
}

// inForce records st as the configuration served, in the metrics: its
// digest (sluice_config_info) and the series of its limits that count what
// the upstream reports; and in tlsListeners, whose listeners keep its TLS
// after a reload takes it out. Called with each state put in force, before
// the next one is.
func (s *Server) inForce(st *state) {
	s.tlsListeners.inForce(st)
	s.metrics.inForce(st.cfg)
	s.reported.known(st.mw.Counts())
}

// levelChanged records a degradation transition: a metric, the
// dashboard's level chart and a log line.
func (s *Server) levelChanged(from, to degrade.Level, why string) {
	s.metrics.degradation.Set(float64(to))
	s.metrics.transitions.WithLabelValues(from.String(), to.String()).Inc()
	s.stats.levelChanged(int(to))
	log := s.log.Info
	if to > from {
		log = s.log.Warn
	}
	log("degradation level changed", "from", from.String(), "to", to.String(), "why", why)
}

// PublicHandler returns the handler of the public listener: the limited
// reverse proxy, GET /docs and GET /healthz.
func (s *Server) PublicHandler() http.Handler {
	if s.zero() {
		return notBuilt()
	}
	return s.public
}

// zero reports whether s is the zero Server, which New did not build.
func (s *Server) zero() bool { return s.state.Load() == nil }

// errZero is the error of the zero Server's Run and Serve.
var errZero = errors.New("server: the zero Server serves nothing (build one with New)")

// notBuilt is the zero Server's handler: 503 to every request, never
// http.DefaultServeMux (which a nil handler would serve).
func notBuilt() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "sluice is not configured", http.StatusServiceUnavailable)
	})
}

// AdminHandler returns the handler of the admin listener: the decision API,
// forward-auth, metrics, dashboard, designer and operator endpoints, each
// refused (401, 403) to callers without its scope. Callers are identified
// by the request's peer address, client certificate and token: mount it
// only where RemoteAddr is the real peer.
func (s *Server) AdminHandler() http.Handler {
	if s.zero() {
		return notBuilt()
	}
	return s.admin
}

// Config returns the configuration being served.
func (s *Server) Config() *config.Config {
	if s.zero() {
		return nil
	}
	return s.state.Load().cfg
}

// Reload loads the configuration again and swaps it in. On error the old
// configuration keeps serving and the error (with file:line:col) is returned
// and logged.
func (s *Server) Reload() error {
	if s.opts.Load == nil {
		return errors.New("server: reloading is not configured")
	}
	s.reloads.Lock()
	defer s.reloads.Unlock()
	cfg, err := s.opts.Load()
	if err == nil {
		cfg = withConnectionDefaults(cfg)
	}
	if err == nil && s.opts.Leases != nil {
		err = errors.Join(cfg.CountsLeasedBy(s.opts.Config.Store), cfg.NotifiedLeasedBy(s.opts.Config.Store))
	}
	if err == nil { // judged by the store running, not the file's store section
		err = cfg.AlgorithmsAgreeOn(s.opts.Config.Store)
	}
	if err == nil {
		var st *state
		if st, err = s.build(cfg); err == nil {
			st.stale = keptStale(s.state.Load(), st)
			s.warnRestartOnly(s.opts.Config, cfg)
			s.warnTrustAll(cfg)
			s.warnExampleTokens(cfg)
			s.warnUnknownKeys(s.state.Load().cfg, cfg)
			s.warnLogRoom(s.state.Load().cfg, cfg)
			s.warnHosts(s.state.Load().cfg, cfg)
			for _, change := range reloadStateChanges(s.state.Load().cfg, cfg) {
				s.log.Info("reload: " + change)
			}
			old := s.state.Swap(st)
			st.served(true)
			if old.closeIdle != nil {
				// Its requests in flight finish on it; what they leave idle
				// closes after the transport's idle timeout.
				old.closeIdle()
			}
			s.ctl.SetConfig(cfg.Degradation.Controller)
			if !cfg.Degradation.Enabled {
				s.ctl.Reset() // the level in force is Normal: say so
			}
			if s.envoy != nil && st.envoyRules != nil {
				s.reloadEnvoy(cfg, st.envoyRules)
			}
			if s.opts.OverLimit != nil {
				s.opts.OverLimit.Reset() // remembered denials were under the old limits
			}
			if s.opts.Leases != nil { // leases were taken under the old limits
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if err := s.opts.Leases.Return(ctx); err != nil {
					s.log.Warn("reload: leased units not all given back (they expire by themselves)", "err", err)
				}
				cancel()
			}
			s.metrics.reloads.WithLabelValues("ok").Inc()
			s.metrics.reloadOK.Set(1)
			s.metrics.reloadTime.SetToCurrentTime()
			s.inForce(st)
			s.log.Info("configuration reloaded", "file", cfg.File, "plans", len(cfg.Policy.Plans), "keys", len(cfg.Keys))
			return nil
		}
	}
	s.metrics.reloads.WithLabelValues("refused").Inc()
	s.metrics.reloadOK.Set(0)
	s.log.Error("configuration refused, the previous one keeps serving", "err", err)
	return err
}

// allowShared decides checks on s.shared and counts a failure of the store
// in storeErrors when s.shared is past the failover (which counts its own):
// an error but an invalid check or the end of the caller's ctx (canceled,
// not its deadline) is the store's.
func (s *Server) allowShared(ctx context.Context, checks []sluice.Check, d *sluice.Decision) error {
	err := s.shared.Allow(ctx, checks, d)
	if err != nil && s.shared != s.limiter && !errors.Is(err, sluice.ErrInvalidCheck) && !errors.Is(ctx.Err(), context.Canceled) {
		s.storeErrors.Add(1)
	}
	return err
}
