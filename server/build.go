package server

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// middlewareScope is the httplimit scope of every middleware the server
// builds: the middleware of each configuration and its reduced-capacity
// twin keep their clients' state in one place, so that a reload or a
// degradation level changes the limits and never resets what clients have
// spent.
const middlewareScope = "serve"

// middlewareOptions returns o with the server's scope, logger, observer and
// clock, StoreLeases when the store in force leases quota (Leases) with the
// limits it leases and their leases' longest life, and an
// OnQueued that gives a request a leaky-bucket queue delays write (the
// configuration's write_timeout) after its wait (waitPastWriteTimeout). The
// clock is passed only when the caller set one: with its own default the
// middleware reads the time once per request, for the headers and the
// decision's latency both.
func (s *Server) middlewareOptions(o httplimit.Options, tokens httplimit.TokenVerifier, write time.Duration) httplimit.Options {
	o.Scope = middlewareScope
	o.Tokens = tokens
	o.Logger, o.Observer, o.OnExempt, o.OnReported = s.log, s.observe, s.exempt.count, s.reported.record
	o.OnRefusal = s.onRefusal
	o.OnQueued = func(w http.ResponseWriter, _ *http.Request, delay time.Duration) {
		waitPastWriteTimeout(w, delay, write)
	}
	o.StoreLeases = s.opts.Leases != nil
	if o.StoreLeases {
		o.StoreLeased, o.StoreLeaseMaxAge = storeLeased(s.opts.Config.Store.Redis)
	}
	if s.ownClock {
		o.Clock = s.opts.Clock
	}
	return o
}

// build derives a state from cfg. The caller calls its served once it
// serves it or drops it.
func (s *Server) build(cfg *config.Config) (*state, error) {
	tokens, served, err := s.tokens.verifierFor(cfg.Identity.JWT)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	st, err := s.buildWith(cfg, tokens)
	if err != nil {
		served(false)
		return nil, err
	}
	st.served = served
	return st, nil
}

// buildWith is build with the verifier of cfg's tokens.
func (s *Server) buildWith(cfg *config.Config, tokens httplimit.TokenVerifier) (*state, error) {
	mw, err := httplimit.New(s.limiter, s.middlewareOptions(cfg.HTTPLimitOptions(), tokens, cfg.Connections.WriteTimeout))
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	upstreamTLS, err := cfg.UpstreamTLS.Load()
	if err != nil {
		return nil, fmt.Errorf("server: upstream: %w", err)
	}
	proxy, closeIdle, err := newProxy(cfg, upstreamTLS, s.upstreamFailures, s.switched, mw)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	proxy = markUpstream(proxy)
	docs, err := newDocsPage(cfg, s.docsLeases())
	if err != nil {
		return nil, fmt.Errorf("server: docs: %w", err)
	}
	rules, err := loadEnvoyRules(cfg)
	if err != nil {
		return nil, err
	}
	if s.opts.Leases != nil { // a leased bucket's headers state its shared burst
		rules.StateLeases(storeLeased(s.opts.Config.Store.Redis))
	}
	st := &state{cfg: cfg, mw: mw, proxy: mw.Handler(proxy), closeIdle: closeIdle, upstreamTLS: upstreamTLS, docs: docs, envoyRules: rules,
		notify: newNotifyRules(cfg.Notify), cors: newCORS(cfg.Response.CORS, mw), namesHost: namesHost(cfg), namesMethod: namesMethod(cfg)}
	if st.publicTLS, err = cfg.TLS.Load("h2", "http/1.1"); err != nil {
		return nil, fmt.Errorf("server: listen: tls: %w", err)
	}
	if st.adminTLS, err = cfg.Admin.TLS.Load("h2", "http/1.1"); err != nil {
		return nil, fmt.Errorf("server: admin: tls: %w", err)
	}
	if st.adminTLS != nil { // the Envoy listener's files are the admin listener's; it speaks gRPC only
		st.envoyTLS = st.adminTLS.Clone()
		st.envoyTLS.NextProtos = []string{"h2"}
	}
	var clientCAs *x509.CertPool
	if st.adminTLS != nil {
		clientCAs = st.adminTLS.ClientCAs
	}
	st.access = newAccess(cfg.Admin, clientCAs)
	if g := cfg.Degradation; g.Enabled {
		ro := s.middlewareOptions(reducedOptions(cfg.HTTPLimitOptions(), g.Factor, g.FactorMaxWindow), tokens, cfg.Connections.WriteTimeout)
		ro.Observer = func(res *httplimit.Result, took time.Duration, err error) {
			s.observeScaled(res, took, err, g.FactorMaxWindow)
		}
		reduced, err := httplimit.New(s.limiter, ro)
		if err != nil {
			return nil, fmt.Errorf("server: reduced limits: %w", err)
		}
		if st.degrade, err = newDegradeState(g, reduced); err != nil {
			return nil, err
		}
		st.reducedProxy = reduced.Handler(proxy)
		if cfg.Upstream != "" {
			st.stale = newStaleCache(g.StaleFor, s.opts.Clock, staleKeyHeaders(mw), append(mw.ResponseHeaders(), "Date", "Content-Length"))
		}
	}
	return st, nil
}

// waitPastWriteTimeout moves w's write deadline to write after delay from
// now, for a request admitted to wait delay (a leaky-bucket queue's turn)
// before it is served: the listener's write_timeout bounds the answer, not
// the wait. It runs from the request's headers, and over HTTP/2 from the
// stream's opening, resetting the stream when it passes, so a delay longer
// than what remains of it would leave an admitted, charged request with no
// answer. Nothing with write 0, which bounds nothing; a writer that cannot
// move its deadline (http.ErrNotSupported) keeps it.
func waitPastWriteTimeout(w http.ResponseWriter, delay, write time.Duration) {
	if write > 0 {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(delay + write))
	}
}

// staleKeyHeaders are the request headers a stale copy is kept under: those
// mw reads (credentials, user, plan, rules' headers) but the forwarding
// header (anonymous clients share copies), the cookies, and Origin (a CORS
// upstream answers each origin its own Access-Control-Allow-Origin).
func staleKeyHeaders(mw *httplimit.Middleware) []string {
	keys := []string{"Cookie", "Origin"}
	for _, h := range mw.RequestHeaders() {
		if h != "X-Forwarded-For" && h != "Forwarded" && !slices.Contains(keys, h) {
			keys = append(keys, h)
		}
	}
	return keys
}

// storeSettings returns the settings of st that its store reads: a memory
// store reads none of Redis's (Parse fills in its lease settings from the
// limits' lease: whatever the type).
func storeSettings(st config.Store) config.Store {
	if st.Type == "" || st.Type == "memory" {
		return config.Store{Type: "memory", MaxKeys: st.MaxKeys}
	}
	return st
}
