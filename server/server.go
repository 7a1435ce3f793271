// Package server wires sluice into one HTTP server: a reverse proxy that
// limits every request, the decision API, a forward-auth endpoint for
// nginx/Traefik/Caddy, and the admin endpoints (health, readiness, metrics,
// client documentation, live dashboard). Configuration reloads on SIGHUP and
// on file change; an invalid new configuration is refused and the old one
// keeps serving.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
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
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// Options configures a Server.
type Options struct {
	// Config is the configuration to start with (required).
	Config *config.Config
	// Load re-reads the configuration on reload; nil disables reloading.
	Load func() (*config.Config, error)
	// WatchFile, when set, reloads when this file changes.
	WatchFile string
	// Store keeps the limits' state (required). It survives reloads.
	Store sluice.Store
	// Logger receives structured logs; slog.Default() when nil.
	Logger *slog.Logger
	// Clock is the time of headers and bodies; time.Now when nil. Use the
	// store's clock.
	Clock func() time.Time
	// Registry receives the metrics; when nil, a new one that also holds
	// the Go runtime's and the process's (go_memstats_*, go_goroutines,
	// process_resident_memory_bytes, …).
	Registry *prometheus.Registry
	// DrainTimeout bounds graceful shutdown, 10s by default.
	DrainTimeout time.Duration
	// Ready reports whether the store is reachable (for /readyz); always
	// ready when nil.
	Ready func(ctx context.Context) error
	// StoreDown reports whether the store is failing (a degradation
	// signal); never when nil.
	StoreDown func() bool
	// Failover and OverLimit, when the store has them (Redis), export
	// their counters as metrics; a reload resets the over-limit cache.
	Failover  *sluice.Failover
	OverLimit *sluice.OverLimitCache
	// Memory, when set, is the in-process store (the store itself on
	// memory, the failover's local store on Redis): its counts of keys,
	// evictions and expirations and its clock's lag become metrics.
	Memory *memory.Store
	// GCHeapFloor is the heap size, in bytes, below which the Go garbage
	// collector starts no cycle while Serve (or Run) serves: after each
	// cycle the server raises GOGC (debug.SetGCPercent) so that the next
	// one starts when the heap reaches this size, or when it doubles the
	// live heap if that is larger. DefaultGCHeapFloor (64 MiB) when zero;
	// negative leaves the collector as the runtime has it. A process whose
	// environment sets GOGC or GOMEMLIMIT is left alone too: the operator's
	// own settings win. The setting is the process's (there is one
	// collector): with several Servers serving, the highest floor applies,
	// and the runtime's setting is restored when the last stops. See
	// DefaultGCHeapFloor for why.
	GCHeapFloor int64
}

// Server is a running sluice. Build it with New; serve with Run or mount
// Handler in your own http.Server.
type Server struct {
	opts     Options
	ownClock bool // the caller set Options.Clock
	log      *slog.Logger
	limiter  *sluice.Limiter
	metrics  *metrics
	stats    *stats
	state    atomic.Pointer[state]
	reloads  sync.Mutex
	handler  http.Handler
	ctl      *degrade.Controller
	mon      *degrade.Monitor
	// envoy is the Envoy rate limit service, with a configuration that has
	// an envoy section; its rules swap on reload.
	envoy     *envoy.Service
	envoyAddr atomic.Pointer[string]
	// checks pools the decision API's per-request memory (checkScratch).
	checks sync.Pool
	// designer runs the designer's simulations within their limits.
	designer *designer
}

// state is everything derived from one configuration; swapped whole on reload.
type state struct {
	cfg   *config.Config
	mw    *httplimit.Middleware
	proxy http.Handler
	docs  *docsPage
	// With a degradation section: limits × factor, classes, stale cache.
	degrade      *degradeState
	reducedProxy http.Handler
	stale        *staleCache
	envoyRules   *envoy.Rules
}

// New builds a Server from opts.
func New(opts Options) (*Server, error) {
	if opts.Config == nil || opts.Store == nil {
		return nil, errors.New("server: Config and Store are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ownClock := opts.Clock != nil
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
		opts.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = 10 * time.Second
	}
	s := &Server{opts: opts, ownClock: ownClock, log: opts.Logger, limiter: sluice.NewLimiter(opts.Store)}
	s.checks.New = newCheckScratch
	s.metrics = newMetrics(opts.Registry)
	registerStoreMetrics(opts.Registry, opts.Failover, opts.OverLimit)
	registerMemoryMetrics(opts.Registry, opts.Memory)
	s.stats = newStats(opts.Clock)
	s.designer = newDesigner(designerLimits{})
	s.mon = degrade.NewMonitor(opts.StoreDown)
	s.ctl = degrade.NewController(opts.Config.Degradation.Controller, nil, s.levelChanged)
	st, err := s.build(opts.Config)
	if err != nil {
		return nil, err
	}
	if st.envoyRules != nil {
		if s.envoy, err = s.newEnvoyService(opts.Config, st.envoyRules); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	s.state.Store(st)
	s.handler = s.routes()
	return s, nil
}

// middlewareOptions are the options of the server's middlewares. The
// clock is passed only when the caller set one: with its own default the
// middleware reads the time once per request, for the headers and the
// decision's latency both.
func (s *Server) middlewareOptions() []httplimit.Option {
	opts := []httplimit.Option{httplimit.WithLogger(s.log), httplimit.WithObserver(s.observe)}
	if s.ownClock {
		opts = append(opts, httplimit.WithClock(s.opts.Clock))
	}
	return opts
}

// build derives a state from cfg.
func (s *Server) build(cfg *config.Config) (*state, error) {
	mw, err := httplimit.New(s.limiter, cfg, s.middlewareOptions()...)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	proxy, err := newProxy(cfg.Upstream, s.log)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	docs, err := newDocsPage(cfg)
	if err != nil {
		return nil, fmt.Errorf("server: docs: %w", err)
	}
	rules, err := loadEnvoyRules(cfg)
	if err != nil {
		return nil, err
	}
	st := &state{cfg: cfg, mw: mw, proxy: mw.Handler(proxy), docs: docs, envoyRules: rules}
	if g := cfg.Degradation; g.Enabled {
		reduced, err := httplimit.New(s.limiter, reducedConfig(cfg, g.Factor), s.middlewareOptions()...)
		if err != nil {
			return nil, fmt.Errorf("server: reduced limits: %w", err)
		}
		st.degrade = &degradeState{reduced: reduced, expensive: patternMux(g.Expensive),
			critical: patternMux(g.Critical), health: patternMux(g.Health)}
		st.reducedProxy = reduced.Handler(proxy)
		if cfg.Upstream != "" {
			ids := append(append([]string(nil), cfg.Identity.APIKeyHeaders...), cfg.Identity.UserHeader, "Cookie")
			st.stale = newStaleCache(g.StaleFor, s.opts.Clock, ids)
		}
	}
	return st, nil
}

// levelChanged records a degradation transition: a metric and a log line.
func (s *Server) levelChanged(from, to degrade.Level, why string) {
	s.metrics.degradation.Set(float64(to))
	s.metrics.transitions.WithLabelValues(from.String(), to.String()).Inc()
	log := s.log.Info
	if to > from {
		log = s.log.Warn
	}
	log("degradation level changed", "from", from.String(), "to", to.String(), "why", why)
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Config returns the configuration being served.
func (s *Server) Config() *config.Config { return s.state.Load().cfg }

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
		var st *state
		if st, err = s.build(cfg); err == nil {
			s.state.Store(st)
			s.ctl.SetConfig(cfg.Degradation.Controller)
			if s.envoy != nil && st.envoyRules != nil {
				s.envoy.SetRules(st.envoyRules)
			}
			if s.opts.OverLimit != nil {
				s.opts.OverLimit.Reset() // remembered denials were under the old limits
			}
			s.metrics.reloads.WithLabelValues("ok").Inc()
			s.log.Info("configuration reloaded", "file", cfg.File, "plans", len(cfg.Policy.Plans))
			return nil
		}
	}
	s.metrics.reloads.WithLabelValues("refused").Inc()
	s.log.Error("configuration refused, the previous one keeps serving", "err", err)
	return err
}

// Run serves on the configured address until ctx is done, then drains
// in-flight requests (up to DrainTimeout). It reloads on SIGHUP and, with
// WatchFile, on file change.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.Config().Listen)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on a listener of the caller's.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	defer s.startGCFloor()()
	var wg sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer func() { stopWatch(); wg.Wait() }()
	if s.opts.Load != nil {
		wg.Go(func() { s.watch(watchCtx) })
	}
	wg.Go(func() { s.sample(watchCtx) })
	if s.envoy != nil {
		eln, err := net.Listen("tcp", s.Config().Envoy.Listen)
		if err != nil {
			return fmt.Errorf("server: envoy: %w", err)
		}
		addr := eln.Addr().String()
		s.envoyAddr.Store(&addr)
		wg.Go(func() { s.serveEnvoy(watchCtx, eln) })
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info("sluice serving", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down, draining in-flight requests", "timeout", s.opts.DrainTimeout)
	drain, cancel := context.WithTimeout(context.Background(), s.opts.DrainTimeout)
	defer cancel()
	if err := srv.Shutdown(drain); err != nil {
		srv.Close()
		return fmt.Errorf("server: shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}
