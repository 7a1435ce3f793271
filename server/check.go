package server

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// Check reports what New, or a Reload, would refuse in cfg beyond what
// config.Load already refused: what the parts of a served configuration
// read and derive when they are built — TLS certificates, keys and client
// CAs, the upstream's CA, Envoy's rule files, the middleware's and the
// Envoy service's options. It listens on nothing, connects to no store and
// fetches no identity provider's keys (tokens are not verified), so a
// configuration it passes may still fail on what only a running server
// meets: a port in use, an unreachable Redis, a key set that does not load.
func Check(cfg *config.Config) error {
	st := memory.New(memory.WithSweepInterval(0))
	defer st.Close()
	reg := prometheus.NewRegistry()
	s := &Server{opts: Options{Config: cfg, Store: st, Clock: time.Now}, log: slog.New(slog.DiscardHandler),
		limiter: sluice.NewLimiter(st)}
	s.metrics = newMetrics(reg)
	s.exempt = newExemptCounters(reg)
	s.reported = newReportedCounters(reg)
	state, err := s.buildWith(cfg, cfg.HTTPLimitOptions().Tokens)
	if err != nil {
		return err
	}
	if state.envoyRules != nil {
		opts := cfg.EnvoyOptions()
		opts.Logger = s.log // what a running server would log is not Check's to say
		if _, err := envoy.NewService(s.limiter, state.envoyRules, opts); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	return nil
}
