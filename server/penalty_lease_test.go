package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/server"
)

// With store.redis.lease: auto and a penalty box, sluice serve still
// decides most requests of a client not in the box from its leases: the
// box's guard goes to Redis once a second per client, not with every
// request (httplimit.Options.StoreLeases).
func TestServerLeasesQuotaBesideAPenaltyBox(t *testing.T) {
	clearOfHourEnd(t, 5*time.Second)
	rs := redistest.Standalone(t)
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(up.Close)
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	text := "upstream: " + up.URL + "\nstore:\n  type: redis\n  redis: {addresses: [\"" + rs.Addr + "\"], timeout: 10s, lease: auto}\n" +
		"plans:\n  free:\n    limits:\n      - {name: per-hour, algorithm: fixed-window, quantity: 100000, window: 1h}\n" +
		"penalty: {refusals: 20, within: 1m, for: 10m}\n" + testAdmin
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
	t.Cleanup(func() { opened.Close() })
	reg := prometheus.NewRegistry()
	srv, err := server.New(server.Options{Config: cfg, Store: opened.Store, Ready: opened.Ready, Registry: reg,
		Failover: opened.Failover, OverLimit: opened.Cache, Leases: opened.Leases,
		Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.PublicHandler()
	start := time.Now()
	for i := range 200 {
		if code := getFrom(h, "198.51.100.7"); code != 200 {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	got := gatheredSeries(t, reg)
	local := got[`sluice_lease_decisions_total{path="local"}`]
	t.Logf("200 requests in %v: %v decided from leases", time.Since(start), local)
	if local < 100 {
		t.Errorf("200 requests of one client not in the box: %v decided from leases, want most", local)
	}
}
