package server

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"

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
		return nil, fmt.Errorf("server: envoy rules: %w", err)
	}
	return rules, nil
}

// newEnvoyService builds the Envoy rate limit service for cfg.
func (s *Server) newEnvoyService(cfg *config.Config, rules *envoy.Rules) (*envoy.Service, error) {
	opts := []envoy.Option{envoy.WithObserver(s.observeEnvoy)}
	if mode := cfg.Envoy.Headers; mode != "none" {
		opts = append(opts, envoy.WithResponseHeaders(mode))
	}
	return envoy.NewService(s.limiter, rules, opts...)
}

// observeEnvoy counts Envoy decisions: policy is the domain, limit the rule.
func (s *Server) observeEnvoy(res *envoy.Result, took time.Duration, err error) {
	s.metrics.seconds.Observe(took.Seconds())
	if err != nil {
		s.metrics.undecided.Inc()
		return
	}
	near := false
	for _, o := range res.Descriptors {
		if o.Limit == "" || o.Result == "" {
			continue
		}
		s.metrics.counters.inc(res.Domain, o.Limit, o.Result)
		near = near || (o.Result == "allowed" && o.Capacity > 0 && o.Remaining*10 < o.Capacity)
	}
	if near && res.Allowed {
		s.metrics.nearLimit.Inc()
	}
}

// envoyWorkers is the number of goroutines that serve Envoy calls and keep
// their grown stacks from one call to the next (grpc.NumStreamWorkers): as
// many as Envoy's usual concurrent calls to one rate limit service.
const envoyWorkers = 64

// envoyWindow is the HTTP/2 flow-control window of the Envoy service's
// connections and streams, in bytes.
const envoyWindow = 1 << 20

// serveEnvoy runs the gRPC server on ln until ctx is done.
func (s *Server) serveEnvoy(ctx context.Context, ln net.Listener) {
	// Stream workers: gRPC otherwise starts a goroutine per call, whose
	// stack then grows (runtime.morestack copying it) on every call — 12% of
	// the server's CPU under the Envoy load of make bench. Calls beyond
	// envoyWorkers at once get a goroutine of their own, as without workers.
	//
	// Static flow-control windows: RLS messages are tens of bytes, so
	// gRPC's dynamic windows (BDP estimation) only cost a PING round trip
	// after another, for nothing.
	gs := grpc.NewServer(grpc.ForceServerCodecV2(envoy.Codec()), grpc.NumStreamWorkers(envoyWorkers),
		grpc.StaticStreamWindowSize(envoyWindow), grpc.StaticConnWindowSize(envoyWindow))
	envoy.Register(gs, s.envoy)
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
	case <-time.After(s.opts.DrainTimeout):
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
