package server

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A degraded level never makes a decision API check one that can never
// pass: a caller's cost may be more than its plan's costs, which floor
// the reduced limits, and a check of a cost that a reduced limit cannot
// hold at all (a limit of 10 halved to 5, cost 8) is decided by the
// configured limits. A cost the reduced limits hold is theirs to decide,
// and one the configured limits cannot hold either stays refused with no
// wait that will do (sluice.Never).
func TestReducedLimitsLeaveACostTheyCannotHoldToTheConfiguredLimits(t *testing.T) {
	cfg, err := config.Parse("sluice.yaml", []byte(`
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}
default_plan: free
degradation:
  levels:
    elevated: {enter: {in_flight: 1000}}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	s, err := New(Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	st := s.state.Load()
	for _, c := range []struct {
		subject string
		cost    int64
		allowed bool
		by      *httplimit.Middleware
	}{
		{"above-the-reduced-burst", 8, true, st.mw},
		{"within-the-reduced-burst", 4, true, st.degrade.reduced},
		{"above-the-configured-burst", 11, false, st.mw},
	} {
		mw, res, err := st.decideAt(context.Background(), degrade.Elevated, httplimit.Requester{Subject: c.subject}, "", "", c.cost)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision.Allowed != c.allowed || mw != c.by {
			t.Errorf("cost %d under a limit of 10 halved to 5: allowed %v (retry after %v), decided by the configured limits %v; want allowed %v, by the configured limits %v",
				c.cost, res.Decision.Allowed, res.Decision.RetryAfter, mw == st.mw, c.allowed, c.by == st.mw)
		}
		if !c.allowed && res.Decision.RetryAfter != sluice.Never {
			t.Errorf("cost %d, more than any limit holds: retry after %v, want Never", c.cost, res.Decision.RetryAfter)
		}
		mw.Discard(res)
	}
}
