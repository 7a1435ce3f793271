package server

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
)

// sluice_store_breaker_open follows the store with no request (the server
// probes an open breaker in the background: failover.Store.RunProbes, run
// by Serve), and its HELP, which /metrics serves to every operator reading
// the gauge, must not say that it waits for a call.
func TestTheBreakerGaugesHelpSaysItNeedsNoCall(t *testing.T) {
	local := memory.New()
	t.Cleanup(func() { local.Close() })
	primary := memory.New()
	t.Cleanup(func() { primary.Close() })
	f, err := failover.New(primary, local, failover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	registerStoreMetrics(reg, f, nil, new(atomic.Int64))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "sluice_store_breaker_open" {
			continue
		}
		if help := mf.GetHelp(); strings.Contains(help, "when a call arrives") || strings.Contains(help, "probe not yet made") {
			t.Errorf("sluice_store_breaker_open's HELP: %q; the server probes an open breaker without a call (RunProbes)", help)
		}
		return
	}
	t.Fatal("no sluice_store_breaker_open gathered")
}
