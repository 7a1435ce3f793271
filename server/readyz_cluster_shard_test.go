package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/server"
)

// A Redis Cluster of three masters, one of them full (noeviction, OOM):
// the keys of its slots are refused by on_store_error deny, the keys of
// the other two masters' slots are decided by Redis as usual. The
// instance still serves two clients in three, and every instance of the
// fleet is in the same state (they share the Cluster): /readyz stays 200,
// for taking every pod out of the Service would make an outage of one
// shard, which refuses a third of the clients, an outage of the whole API.
func TestReadyzStaysReadyWhileOneShardOfAClusterFails(t *testing.T) {
	c := redistest.Cluster(t)
	addrs := `"` + strings.Join(c.Addrs(), `", "`) + `"`
	cfg, err := config.Parse("sluice.yaml", []byte("store:\n  type: redis\n  redis: {mode: cluster, addresses: ["+addrs+"], timeout: 1s, on_store_error: deny}\n"+
		"plans:\n  free:\n    limits:\n      - {name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	opened, err := server.OpenStore(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	ctx := context.Background()
	lim := sluice.NewLimiter(opened.Store)
	srv, err := server.New(server.Options{Config: cfg, Store: opened.Store, Memory: opened.Memory,
		Ready: opened.Ready, StoreDown: opened.StoreDown, Failover: opened.Failover, OverLimit: opened.Cache,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ls := serveOn(t, srv)
	readyz := func() (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + ls.admin + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	decide := func(round int) (admitted, refused int) {
		var d sluice.Decision
		for i := 0; i < 60; i++ {
			err := lim.Allow(ctx, []sluice.Check{{Key: fmt.Sprintf("client-%d-%d", round, i), Limit: sluice.PerMinute(1000), Cost: 1}}, &d)
			switch {
			case err == nil && d.Allowed:
				admitted++
			case err == nil:
				refused++
			}
		}
		return admitted, refused
	}
	if a, _ := decide(0); a != 60 {
		t.Fatalf("with the Cluster up, %d of 60 admitted", a)
	}
	if code, _ := readyz(); code != http.StatusOK {
		t.Fatalf("/readyz with the Cluster up: %d", code)
	}

	full := c.Masters[0]
	full.MustDo("CONFIG", "SET", "maxmemory-policy", "noeviction")
	full.MustDo("CONFIG", "SET", "maxmemory", "1")
	t.Cleanup(func() { full.MustDo("CONFIG", "SET", "maxmemory", "0") })

	admitted, refused := decide(1)
	time.Sleep(50 * time.Millisecond)
	admitted2, refused2 := decide(2)
	admitted, refused = admitted+admitted2, refused+refused2
	if refused == 0 || admitted < 60 {
		t.Fatalf("scenario not reached: %d admitted, %d refused of 120", admitted, refused)
	}
	code, body := readyz()
	if code != http.StatusOK {
		t.Errorf("one master of three full: the instance still admitted %d of 120 clients (refused %d, those of the full shard), "+
			"yet /readyz answers %d %q: every pod of the fleet leaves the Service and the API is down for every client", admitted, refused, code, strings.TrimSpace(body))
	}
}
