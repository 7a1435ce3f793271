package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/server"
)

// TestNotifyTellsNoOtherInstancesLeaseAsUsed: a notification tells what a
// client used (docs/operations.md, "Use, never a reservation"). A leased
// status's Remaining is the shared remainder and this instance's units, so
// with store.redis.lease: auto the lease another instance took for the
// client (units the shared state counts at once, none spent yet) would be
// told as used: 100% through A at 12 of 20, under the id of its real
// crossing, and B admitting it on. The configuration refuses a notified
// limit that leases; with lease: off on it, two instances sharing Redis
// tell nothing before the client used its 20.
func TestNotifyTellsNoOtherInstancesLeaseAsUsed(t *testing.T) {
	clearOfHourEnd(t, 10*time.Second)
	hook := &hookReceiver{}
	hooks := httptest.NewServer(hook)
	t.Cleanup(hooks.Close) // after the servers' Close, which sends what is queued
	rs := redistest.Standalone(t)
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer up.Close()
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	load := func(limitLease string) (*config.Config, error) {
		text := "upstream: " + up.URL + "\nstore:\n  type: redis\n  redis: {addresses: [\"" + rs.Addr + "\"], timeout: 1s, lease: auto}\n" +
			"plans:\n  free:\n    limits:\n      - {name: per-hour, algorithm: fixed-window, quantity: 20, window: 1h" + limitLease + "}\n" + testAdmin +
			"notify:\n  url: " + hooks.URL + "\n  at: [100]\n  limits: [per-hour]\n"
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return config.Load(file)
	}
	if _, err := load(""); err == nil || !strings.Contains(err.Error(), `notify.limits[0]: "per-hour" is leased from Redis (lease: auto)`) {
		t.Fatalf("a notified limit that leases: %v, want it refused at notify.limits[0]", err)
	}
	cfg, err := load(", lease: off")
	if err != nil {
		t.Fatal(err)
	}
	instance := func() http.Handler {
		opened, err := server.OpenStore(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { opened.Close() })
		srv, err := server.New(server.Options{Config: cfg, Store: opened.Store, Ready: opened.Ready,
			Failover: opened.Failover, OverLimit: opened.Cache, Leases: opened.Leases})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return srv.PublicHandler()
	}
	a, b := instance(), instance()
	if code := getFrom(b, "198.51.100.7"); code != 200 {
		t.Fatalf("through B: %d", code)
	}
	admitted := 1
	for getFrom(a, "198.51.100.7") == 200 && admitted < 40 {
		admitted++
	}
	if admitted != 20 {
		t.Fatalf("admitted %d times through B and A, want 20", admitted)
	}
	bodies, _ := hook.waitFor(t, 1)
	if !strings.Contains(bodies[0], `"used":20`) {
		t.Errorf("told %s, want 100%% at 20 used", bodies[0])
	}
}
