package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
)

// loadEnvoyRules loads the rules of cfg's envoy section (nil without one).
func loadEnvoyRules(cfg *config.Config) (*envoy.Rules, error) {
	if !cfg.Envoy.Enabled {
		return nil, nil
	}
	rules, err := envoy.LoadRuleFiles(cfg.Envoy.Rules...)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err) // the error says "envoy rules: …"
	}
	return rules, nil
}

// newEnvoyService builds the Envoy rate limit service for cfg.
func (s *Server) newEnvoyService(cfg *config.Config, rules *envoy.Rules) (*envoy.Service, error) {
	o := cfg.EnvoyOptions()
	o.Observer, o.Logger = s.observeEnvoy, s.log
	return envoy.NewService(s.limiter, rules, o)
}

// reloadEnvoy hands the Envoy service the rules and the response headers
// (envoy.headers and the draft-6 names) of cfg, a reloaded configuration.
// Loading cfg validated the headers: should the service still refuse
// them, it keeps its own, and the error is logged.
func (s *Server) reloadEnvoy(cfg *config.Config, rules *envoy.Rules) {
	s.envoy.SetRules(rules)
	if err := s.envoy.SetHeaders(cfg.EnvoyOptions()); err != nil {
		s.log.Error("reload: the envoy response headers are refused; the previous ones keep serving", "err", err)
	}
}

// observeEnvoy counts Envoy decisions, in the metrics and on the dashboard:
// policy is the domain, limit the rule; a descriptor refused because the
// store could not be reached (Outcome.Unavailable) is counted
// "unavailable", not as its limit's refusal. An invalid request (Envoy's
// mistake, answered InvalidArgument) is logged, not counted as undecided
// nor in sluice_decision_seconds: the store did not fail, and nothing was
// decided.
func (s *Server) observeEnvoy(res *envoy.Result, took time.Duration, err error) {
	if status.Code(err) == codes.InvalidArgument {
		s.warnings.Warn(context.Background(), s.log, "envoy: invalid request refused", "domain", res.Domain, "err", err)
		return
	}
	s.metrics.seconds.Observe(took.Seconds())
	if err != nil {
		s.undecided(err)
		return
	}
	if s.decidedByFallback(nil, took) {
		s.metrics.fallbackRequests.Inc()
	}
	s.stats.recordEnvoy(res)
	near := false
	for _, o := range res.Descriptors {
		if o.Limit == "" || o.Result == "" {
			continue
		}
		result := o.Result
		if o.Unavailable && (o.Result == resultLimited || o.Result == resultShadow) {
			result = resultUnavailable // no limit refused it: the store could not be reached
		}
		s.metrics.counters.inc(res.Domain, o.Limit, result)
		near = near || (o.Result == "allowed" && o.Capacity > 0 && o.Remaining*10 < o.Capacity)
	}
	if near && res.Allowed {
		s.metrics.nearLimit.Inc()
	}
	if !res.Allowed {
		s.logEnvoyRefusal(res)
	}
	if st := s.state.Load(); st != nil && st.notify != nil && !s.fellBack(nil, took) {
		s.notify.observeEnvoy(st.notify, res)
	}
}

// envoyWorkers is the number of goroutines that serve Envoy calls and keep
// their grown stacks from one call to the next (grpc.NumStreamWorkers): as
// many as Envoy's usual concurrent calls to one rate limit service.
const envoyWorkers = 64

// envoyWindow is the HTTP/2 flow-control window of the Envoy service's
// connections and streams, in bytes.
const envoyWindow = 1 << 20

// envoyMaxStreams bounds the calls of one connection at once, as
// net/http's HTTP/2 server bounds the streams of the HTTP listeners': with
// connections.max, it bounds the calls the service runs at once. Beyond it
// Envoy's connection pool opens another connection, and a gRPC client's
// call waits for one of the connection's calls to end.
const envoyMaxStreams = 250

// envoyMaxMessage bounds one RLS request, in bytes: descriptors are small.
const envoyMaxMessage = 1 << 20

// authorizeEnvoy admits a call from a caller with the check scope: a token
// in the authorization ("Bearer …") or sluice-token metadata, a client
// certificate, or a loopback address the configuration trusts (a peer on
// a Unix-domain socket listener has no address, see ipOfPeer).
func (s *Server) authorizeEnvoy(ctx context.Context, info *tap.Info) (context.Context, error) {
	var token string
	if v := info.Header.Get(strings.ToLower(TokenHeader)); len(v) > 0 {
		token = v[0]
	} else if v := info.Header.Get("authorization"); len(v) > 0 && len(v[0]) > 7 && strings.EqualFold(v[0][:7], "bearer ") {
		token = strings.TrimSpace(v[0][7:])
	}
	var addr netip.Addr
	var cs *tls.ConnectionState
	if p, ok := peer.FromContext(ctx); ok {
		addr = ipOfPeer(p.LocalAddr, p.Addr.String())
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			cs = &ti.State
		}
	}
	c := s.state.Load().access.identify(addr, cs, token)
	if c.scopes.Has(config.ScopeCheck) {
		return ctx, nil
	}
	s.metrics.refusedCallers.WithLabelValues(config.ScopeCheck.String()).Inc()
	if c.name == "" {
		return nil, status.Error(codes.Unauthenticated, "sluice: this service needs a caller token with the check scope in the authorization (Bearer) or sluice-token metadata")
	}
	return nil, status.Errorf(codes.PermissionDenied, "sluice: the caller %s does not hold the check scope", c.name)
}

// serveEnvoy runs the gRPC server on ln until ctx is done. Its callers
// are the admin listener's: a call without the check scope is refused
// before it is read (Unauthenticated or PermissionDenied).
func (s *Server) serveEnvoy(ctx context.Context, ln net.Listener, useTLS bool) {
	// Stream workers: gRPC otherwise starts a goroutine per call, whose
	// stack then grows (runtime.morestack copying it) on every call. Calls
	// beyond envoyWorkers at once get a goroutine of their own, as without
	// workers.
	//
	// Static flow-control windows: RLS messages are tens of bytes, so
	// gRPC's dynamic windows (BDP estimation) only cost a PING round trip
	// after another, for nothing.
	c := s.Config().Connections
	// A connection is used by the calls it is admitted: a stranger's,
	// whose calls are all refused, is closed first to make room.
	bl := newBoundedListener(ln, c.Max, s.metrics.shedConnections.WithLabelValues("envoy").Inc)
	bl.trackPeers()
	authorize := func(ctx context.Context, info *tap.Info) (context.Context, error) {
		ctx, err := s.authorizeEnvoy(ctx, info)
		if err != nil {
			return nil, err
		}
		if p, ok := peer.FromContext(ctx); ok {
			bl.used(p.Addr)
		}
		return ctx, nil
	}
	opts := []grpc.ServerOption{grpc.ForceServerCodecV2(envoy.Codec()), grpc.NumStreamWorkers(envoyWorkers),
		grpc.StaticStreamWindowSize(envoyWindow), grpc.StaticConnWindowSize(envoyWindow),
		grpc.InTapHandle(authorize), grpc.ConnectionTimeout(c.ReadHeaderTimeout),
		grpc.MaxRecvMsgSize(envoyMaxMessage), grpc.MaxHeaderListSize(uint32(c.MaxHeaderBytes)), grpc.MaxConcurrentStreams(envoyMaxStreams),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: c.IdleTimeout})}
	if useTLS {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.listenerTLS(func(st *state) *tls.Config { return st.envoyTLS }))))
	}
	gs := grpc.NewServer(opts...)
	envoy.Register(gs, s.envoy)
	ln = bl
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := gs.Serve(ln); err != nil {
			s.log.Error("envoy gRPC server stopped", "err", err)
		}
	}()
	s.log.Info("envoy rate limit service serving", "addr", ln.Addr().String())
	<-ctx.Done()
	stopped := make(chan struct{})
	go func() { gs.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(s.drainTimeout()):
		gs.Stop()
	}
	<-done
}

// EnvoyAddr returns the address the Envoy service listens on, once Serve
// has started it; "" otherwise.
func (s *Server) EnvoyAddr() string {
	if a := s.envoyAddr.Load(); a != nil {
		return *a
	}
	return ""
}
