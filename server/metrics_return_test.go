package server_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// failsOnce is a memory store whose first decision fails, as one call
// that misses the store's timeout while the store is up.
type failsOnce struct {
	sluice.Store
	failed atomic.Bool
}

func (s *failsOnce) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if s.failed.CompareAndSwap(false, true) {
		return sluice.ErrStoreUnavailable
	}
	return s.Store.Apply(ctx, checks, out)
}

// The refusals an instance's share makes while it returns to a store that
// answers again, and the units admitted locally that the store is never
// charged for, are series of their own, apart from the fallback decisions
// they are among: an operator tells a Redis that misses its timeout now
// and then from one that is down, and sees admissions beyond the bound.
func TestReturnRefusalsAndUnchargedUnitsAreExported(t *testing.T) {
	for name, tc := range map[string]struct {
		charge func(context.Context, []sluice.Check) error
		want   func(failover.Stats) (string, int64)
	}{
		// With a charge, the local admission is charged, and the calls
		// after it are decided by the share (5 of 10) for the return period.
		"return refusals": {func(context.Context, []sluice.Check) error { return nil },
			func(st failover.Stats) (string, int64) {
				return "sluice_store_return_refusals_total", st.ReturnRefusals
			}},
		// Without one, what the fallback admits is never charged.
		"uncharged units": {nil,
			func(st failover.Stats) (string, int64) { return "sluice_store_uncharged_units_total", st.Uncharged }},
	} {
		t.Run(name, func(t *testing.T) {
			primary, local := memory.New(), memory.New()
			t.Cleanup(func() { primary.Close(); local.Close() })
			f, err := failover.New(&failsOnce{Store: primary}, local, failover.Options{Timeout: time.Second, Instances: 2, Charge: tc.charge})
			if err != nil {
				t.Fatal(err)
			}
			lim := sluice.NewLimiter(f)
			var d sluice.Decision
			for i := range 10 {
				err := lim.Allow(context.Background(), []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}}, &d)
				if err != nil && !errors.Is(err, sluice.ErrStoreUnavailable) {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			st := f.Stats()
			series, want := tc.want(st)
			if want == 0 {
				t.Fatalf("%s: the run made none (%+v); the test needs some", series, st)
			}
			cfg, err := config.Parse("t.yaml", []byte("plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"))
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewRegistry()
			if _, err := server.New(server.Options{Config: cfg, Store: f, Failover: f, Registry: reg}); err != nil {
				t.Fatal(err)
			}
			got := gatheredSeries(t, reg)
			if v, ok := got[series]; !ok || v != float64(want) {
				t.Errorf("%s = %v (exported %v), want %d", series, v, ok, want)
			}
			if v := got["sluice_fallback_decisions_total"]; v != float64(st.FallbackDecisions) {
				t.Errorf("sluice_fallback_decisions_total = %v, want %d", v, st.FallbackDecisions)
			}
		})
	}
}
