package server_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A program that embeds the server and hands New a Registry that already
// holds metrics of the server's names (a second Server's, or its own) gets
// an error from New, not a panic, and its Registry keeps only what it held:
// the Server that failed leaves none of its metrics behind, so a later New
// on that Registry, once the other is gone, succeeds.
func TestNewOnARegistryThatHoldsItsMetricsIsAnErrorNotAPanic(t *testing.T) {
	cfg, err := config.Parse("x.yaml", []byte("plans:\n  p:\n    limits: [{name: l, algorithm: gcra, quantity: 1, window: 1s}]\ndefault_plan: p\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { st.Close() })
	opts := func(reg *prometheus.Registry) server.Options {
		return server.Options{Config: cfg, Store: st, Memory: st, Registry: reg,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	families := func(reg *prometheus.Registry) int {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		return len(mfs)
	}

	reg := prometheus.NewRegistry()
	// A metric of the embedding program's own, of a name the server uses
	// (the last it registers, so that New has registered all the others
	// when it fails), and of the same help: Prometheus remembers a name's
	// help and labels after Unregister, and would refuse the server's
	// under another help for good.
	own := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_proxy_switched_connections",
		Help: "Connections the reverse proxy switched to another protocol (WebSockets) open now."})
	reg.MustRegister(own)
	before := families(reg)
	var srv *server.Server
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("server.New panicked on a Registry holding one of its names: %v", p)
			}
		}()
		srv, err = server.New(opts(reg))
	}()
	if err == nil || srv != nil {
		t.Fatalf("server.New = %v, %v; want an error", srv, err)
	}
	if !strings.Contains(err.Error(), "metric") {
		t.Errorf("the error does not say it is about the metrics: %v", err)
	}
	if got := families(reg); got != before {
		t.Errorf("the Registry holds %d metric families after the failed New, %d before", got, before)
	}

	// Without the program's metric, the same Registry takes a Server (the
	// failed New's metrics are gone: they would be duplicates); a second
	// Server on it is refused the same way.
	reg.Unregister(own)
	if _, err := server.New(opts(reg)); err != nil {
		t.Fatalf("server.New on the Registry without the conflicting metric: %v", err)
	}
	held := families(reg)
	if _, err := server.New(opts(reg)); err == nil {
		t.Fatal("a second Server on the same Registry: no error")
	}
	if got := families(reg); got != held {
		t.Errorf("the Registry holds %d metric families after the second New failed, %d before", got, held)
	}
}
