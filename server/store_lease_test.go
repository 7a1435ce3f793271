package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/server"
)

// With store.redis.lease: auto, sluice serve decides most requests from
// quota leased from Redis, exports what the leases did, and gives the
// units it holds back to Redis on a reload.
func TestServerLeasesQuota(t *testing.T) {
	rs := redistest.Standalone(t)
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(up.Close)
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	text := "upstream: " + up.URL + "\nstore:\n  type: redis\n  redis: {addresses: [\"" + rs.Addr + "\"], timeout: 1s, lease: auto}\n" +
		"plans:\n  free:\n    limits:\n      - {name: per-minute, algorithm: fixed-window, quantity: 100000, window: 1m}\n" + testAdmin
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := server.OpenStore(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	if opened.Leases == nil {
		t.Fatal("lease: auto opened a store without leases")
	}
	reg := prometheus.NewRegistry()
	srv, err := server.New(server.Options{Config: cfg, Store: opened.Store, Ready: opened.Ready, Registry: reg,
		Failover: opened.Failover, OverLimit: opened.Cache, Leases: opened.Leases,
		Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.PublicHandler()
	for i := range 200 {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/a", nil)
		r.RemoteAddr = "198.51.100.7:1234"
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("request %d: %d", i, w.Code)
		}
	}
	got := gatheredSeries(t, reg)
	if got[`sluice_lease_decisions_total{path="local"}`] < 100 || got[`sluice_lease_takes_total`] < 1 {
		t.Errorf("200 requests of one client: %v local decisions, %v takes; want most decided from a lease",
			got[`sluice_lease_decisions_total{path="local"}`], got[`sluice_lease_takes_total`])
	}
	if got[`sluice_lease_units_held`] <= 0 {
		t.Fatalf("no units held after the requests: %v", got)
	}
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	got = gatheredSeries(t, reg)
	if got[`sluice_lease_units_held`] != 0 || got[`sluice_lease_units_total{event="returned"}`] <= 0 {
		t.Errorf("after a reload: %v units held, %v returned; want every unit given back",
			got[`sluice_lease_units_held`], got[`sluice_lease_units_total{event="returned"}`])
	}
}

// gatheredSeries returns every series of reg as name{label="value"} → value.
func gatheredSeries(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			name := mf.GetName()
			if len(labels) > 0 {
				name += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[name] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[name] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}
