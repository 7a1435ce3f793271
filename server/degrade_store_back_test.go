package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A level entered by store_down is left once the store is back, with no
// request: store_down is the failover breaker's state, and at level 3
// every request but the health checks is shed before it reaches the
// store, so only the server's probes of the breaker (RunProbes) can find
// the store back. Without them the instance stayed critical, refusing all
// its traffic, for as long as it ran.
func TestALevelEnteredByAStoreDownIsLeftOnceTheStoreIsBack(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(up.Close)
	cfg, err := config.Parse("d.yaml", []byte("upstream: "+up.URL+`
plans:
  free:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 100000, window: 1s}
degradation:
  interval: 20ms
  min_dwell: 100ms
  levels:
    critical: {enter: {store_down: true}}
`+testAdmin))
	if err != nil {
		t.Fatal(err)
	}
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	primary := &storetest.Flaky{Next: memory.New(memory.WithSweepInterval(0))}
	fo, err := failover.New(primary, local, failover.Options{
		Breaker: failover.BreakerOptions{OpenFor: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: fo, Failover: fo,
		StoreDown: func() bool { return fo.Stats().Breaker != failover.BreakerClosed },
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + serveOn(t, srv).public

	primary.Fail(storetest.ErrRedisDown) // the breaker opens on failed decisions
	deadline := time.Now().Add(5 * time.Second)
	for srv.Degradation().Level != degrade.Critical {
		if time.Now().After(deadline) {
			t.Fatalf("never critical with the store down: %+v", srv.Degradation())
		}
		if resp, err := http.Get(base + "/api/items"); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		time.Sleep(5 * time.Millisecond)
	}

	primary.Fail(nil) // back; no request comes
	// 3 × (min_dwell + 2 × interval) (docs/operations.md) is 420 ms.
	deadline = time.Now().Add(3 * time.Second)
	for srv.Degradation().Level != degrade.Normal {
		if time.Now().After(deadline) {
			st := srv.Degradation()
			t.Fatalf("store back for 3s, level still %v (store_down %v, breaker %v)", st.Level, st.Signals.StoreDown, fo.Stats().Breaker)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
