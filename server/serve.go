package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Listeners are the sockets a Server serves on.
type Listeners struct {
	// Public and Admin are required.
	Public, Admin net.Listener
	// Envoy serves the Envoy rate limit service when the configuration has
	// an envoy section; nil opens the configured envoy.listen.
	Envoy net.Listener
}

// Run opens the configured listeners and serves on them until ctx is done
// and the configuration's shutdown.delay has passed (see config.Shutdown),
// then drains in-flight requests and notify's queue, both within one
// DrainTimeout, and the requests it cuts off within cutOffRoom more (see
// Serve). It reloads on Options.Reloads and, with
// WatchFile, on file change. It closes the Server (see Close) when it
// returns, listeners it could not open included.
func (s *Server) Run(ctx context.Context) error {
	if s.zero() {
		return errZero
	}
	cfg := s.Config()
	pub, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		s.Close()
		return fmt.Errorf("server: listen: %w", err)
	}
	adm, err := net.Listen("tcp", cfg.Admin.Listen)
	if err != nil {
		pub.Close()
		s.Close()
		return fmt.Errorf("server: admin: %w", err)
	}
	return s.Serve(ctx, Listeners{Public: pub, Admin: adm})
}

// Close stops what New started besides the listeners: the refresh of
// identity.jwt's keys (tokens are then verified with the keys fetched
// last), the proxy's idle connections to the upstream, and notify's
// poster, after it has sent what is queued for up to DrainTimeout (what
// it could not send is logged and counted as dropped). Serve calls it when
// it returns, giving notify's queue what remains of the drain instead; a
// Server that is never served must be closed. It is idempotent.
func (s *Server) Close() error {
	if s.zero() {
		return nil
	}
	s.closeWithin(s.drainTimeout())
	return nil
}

// closeWithin is Close giving notify's queue up to within.
func (s *Server) closeWithin(within time.Duration) {
	s.tokens.close()
	if st := s.state.Load(); st.closeIdle != nil {
		st.closeIdle()
	}
	if left := s.notify.close(within); left > 0 {
		s.log.Warn("notifications not sent at shutdown", "dropped", left, "timeout", within)
	}
}

// Serve is Run on listeners of the caller's. It closes them, and the
// Server (see Close), when it returns. Its shutdown closes every listener
// at once and has one deadline, DrainTimeout after they close: requests in
// flight have until then, and notify's queue what remains of it once they
// have ended. Requests still running at the deadline are cut off: their
// connections are closed and their contexts done, those waiting for a
// turn or for a body included. Connections switched to another protocol
// (WebSockets) are closed, and their handlers' contexts done, once the
// other requests have ended or been cut off. Serve then waits for the
// handlers of both, which give back what their requests hold (a
// concurrency limit's slot), until the deadline or, if later, for
// cutOffRoom: a shutdown takes shutdown.delay + DrainTimeout at most, and
// up to cutOffRoom more when it cuts requests off or closes switched
// connections less than cutOffRoom before the deadline. The lines the logs
// left out since their last summary (see summarize) are summed up before
// it returns.
func (s *Server) Serve(ctx context.Context, ls Listeners) error {
	if s.zero() {
		for _, l := range []net.Listener{ls.Public, ls.Admin, ls.Envoy} {
			if l != nil {
				l.Close()
			}
		}
		return errZero
	}
	var drainEnd time.Time // the shutdown's deadline, once it has begun
	defer func() {
		within := s.drainTimeout()
		if !drainEnd.IsZero() {
			within = max(time.Until(drainEnd), 0)
		}
		s.closeWithin(within)
	}()
	if ls.Public == nil || ls.Admin == nil {
		return errors.New("server: Serve needs the Public and Admin listeners")
	}
	cfg := s.Config()
	if s.envoy != nil && ls.Envoy == nil {
		eln, err := net.Listen("tcp", cfg.Envoy.Listen)
		if err != nil {
			ls.Public.Close()
			ls.Admin.Close()
			return fmt.Errorf("server: envoy: %w", err)
		}
		ls.Envoy = eln
	}
	st := s.state.Load()
	public := ls.Public
	if len(cfg.ProxyProtocol) > 0 {
		public = s.proxyProtocolListener(public, cfg.Connections.ReadHeaderTimeout, s.metrics.proxyHeaderRefusals.Inc)
	}
	servers := []*httpListener{
		s.httpListener("public", s.public, public, st.publicTLS != nil, func(st *state) *tls.Config { return st.publicTLS }),
		s.httpListener("admin", s.admin, ls.Admin, st.adminTLS != nil, func(st *state) *tls.Config { return st.adminTLS }),
	}
	// The requests' contexts, which the connections' (connContext) carry,
	// end when Serve cuts them off: closing a connection does not end the
	// context of an HTTP/1.1 request whose body is not read whole, nor of a
	// switched connection's handler.
	cutOff, cutOffNow := context.WithCancel(context.Background())
	defer cutOffNow()
	for _, l := range servers {
		l.srv.BaseContext = func(net.Listener) context.Context { return cutOff }
	}
	var wg sync.WaitGroup
	// The watch, the sampling, the store's probes, the refusal log's
	// summary and Envoy's service run until the listeners close, past
	// ctx's end by shutdown.delay. The probes keep the store's health
	// (store_down, the breaker's metrics and dashboard field) following
	// the store's while no request reaches it: a level that sheds every
	// request, or no traffic.
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	defer func() { stopWatch(); wg.Wait() }()
	if s.opts.Load != nil {
		wg.Go(func() { s.watch(watchCtx) })
	}
	wg.Go(func() { s.sample(watchCtx) })
	if fo := s.opts.Failover; fo != nil {
		wg.Go(func() { fo.RunProbes(watchCtx) })
	}
	wg.Go(func() { s.summarize(watchCtx) })
	if s.envoy != nil {
		addr := ls.Envoy.Addr().String()
		s.envoyAddr.Store(&addr)
		envoyLn := ls.Envoy
		wg.Go(func() { s.serveEnvoy(watchCtx, envoyLn, st.envoyTLS != nil) })
	} else if ls.Envoy != nil {
		ls.Envoy.Close()
	}
	errc := make(chan error, len(servers))
	for _, l := range servers {
		go func() { errc <- l.serve() }()
	}
	s.log.Info("sluice serving", "public", ls.Public.Addr().String(), "admin", ls.Admin.Addr().String(),
		"admin_loopback_scopes", cfg.Admin.LoopbackScopes.String(), "admin_callers", len(cfg.Admin.Callers))
	var envoyAddr net.Addr
	if s.envoy != nil {
		envoyAddr = ls.Envoy.Addr()
	}
	s.warnExposure(cfg, ls.Admin.Addr(), envoyAddr)
	var errs []error
	pending := len(servers)
	select {
	case err := <-errc:
		pending--
		errs = append(errs, err) // a listener failed: stop the others too
	case <-ctx.Done():
		if err := s.lameDuck(servers, errc); err != nil {
			pending--
			errs = append(errs, err)
		}
	}
	s.draining.Store(true)
	stopWatch()
	s.log.Info("shutting down, draining in-flight requests", "timeout", s.drainTimeout())
	drainEnd = time.Now().Add(s.drainTimeout())
	drain, cancel := context.WithDeadline(context.Background(), drainEnd)
	defer cancel()
	shutErrs := make([]error, len(servers))
	var shut sync.WaitGroup
	for i, l := range servers { // at once: each listener closes now
		shut.Go(func() { shutErrs[i] = s.shutdown(l, drain) })
	}
	shut.Wait() // every request has ended, or been cut off at the deadline
	errs = append(errs, shutErrs...)
	cutOffNow()
	s.switched.closeAll() // http.Server neither waits for nor closes them
	// Their handlers, and those of requests cut off, are still giving back
	// what the requests hold: the caller closes the store next.
	until := drainEnd
	if room := time.Now().Add(cutOffRoom); room.After(until) {
		until = room
	}
	if n := waitHandlers(servers, until); n > 0 {
		s.log.Warn("requests still running at shutdown: what they hold may stay held until it expires", "requests", n, "timeout", cutOffRoom)
	}
	s.lastSummaries()
	for ; pending > 0; pending-- {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// shutdown shuts l's server down within drain's deadline, and past it
// closes its connections, cutting off the requests still running.
func (s *Server) shutdown(l *httpListener, drain context.Context) error {
	err := l.srv.Shutdown(drain)
	if err == nil {
		return nil
	}
	l.srv.Close()
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("requests were still in flight on %s after shutdown.drain (%v), and were cut off: %w", l.ln.Addr(), s.drainTimeout(), err)
	}
	return fmt.Errorf("shutdown: %w", err)
}

// cutOffRoom is how long past the drain's deadline Serve waits for the
// handlers of the requests it cut off, and of the switched connections it
// closed then, to return: their contexts are done, and what is left is to
// give back what they hold, a store's round trip.
const cutOffRoom = time.Second

// waitHandlers waits until the handlers of servers have all returned, or
// until, and returns how many are still running.
func waitHandlers(servers []*httpListener, until time.Time) int64 {
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		var n int64
		for _, l := range servers {
			n += l.handlers.Load()
		}
		left := time.Until(until)
		if n == 0 || left <= 0 {
			return n
		}
		time.Sleep(min(wait, left))
	}
}

// lameDuck keeps serving for the configuration's shutdown.delay while
// /readyz answers 503 and every answer closes its connection, so that a
// load balancer watching readiness stops sending new connections before
// the listeners close. It returns early with the error of a listener that
// failed meanwhile (received from errc).
func (s *Server) lameDuck(servers []*httpListener, errc <-chan error) error {
	d := s.Config().Shutdown.Delay
	if d <= 0 {
		return nil
	}
	s.draining.Store(true)
	for _, l := range servers {
		l.srv.SetKeepAlivesEnabled(false)
	}
	s.log.Info("shutting down: not ready, still serving until the delay ends", "delay", d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-errc:
		return err
	case <-t.C:
		return nil
	}
}

// drainTimeout is Options.DrainTimeout, else the configuration's
// shutdown.drain.
func (s *Server) drainTimeout() time.Duration {
	if s.opts.DrainTimeout > 0 {
		return s.opts.DrainTimeout
	}
	return s.Config().Shutdown.Drain
}

// httpListener is one listener and its HTTP server.
type httpListener struct {
	srv    *http.Server
	ln     net.Listener
	useTLS bool
	// handlers counts the server's handlers running, those of connections
	// switched to another protocol included, which the server no longer
	// tracks.
	handlers atomic.Int64
}

// counted returns h counting its calls running in l.handlers.
func (l *httpListener) counted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.handlers.Add(1)
		defer l.handlers.Add(-1)
		h.ServeHTTP(w, r)
	})
}

func (l *httpListener) serve() error {
	if l.useTLS {
		return l.srv.ServeTLS(l.ln, "", "")
	}
	return l.srv.Serve(l.ln)
}

// httpListener makes the server of one listener: its connections bounded
// by the configuration's connections section, and TLS when useTLS. On the
// admin listener a connection outlives strangers' once a request on it
// proves its caller (guard); on the others, once any request reaches h.
func (s *Server) httpListener(name string, h http.Handler, ln net.Listener, useTLS bool, pick func(*state) *tls.Config) *httpListener {
	c := s.Config().Connections
	bl := newBoundedListener(ln, c.Max, s.metrics.shedConnections.WithLabelValues(name).Inc)
	if name != "admin" {
		h = bl.markUsed(h)
	}
	l := &httpListener{ln: bl, useTLS: useTLS}
	srv := &http.Server{
		Handler:           l.counted(h),
		ConnContext:       connContext,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
		MaxHeaderBytes:    c.MaxHeaderBytes,
		ConnState:         bl.connState,
		ErrorLog:          s.serverErrors.logger(),
	}
	if useTLS {
		srv.TLSConfig = s.listenerTLS(pick)
	}
	if name == "public" {
		// HTTP/2 without TLS too (prior knowledge), as gRPC clients of an
		// h2c:// upstream speak it.
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetHTTP2(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	l.srv = srv
	return l
}
