package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/server"
)

// The calls the server makes to the shared store past its failover — a
// signed settlement's once-check and the global limits' peek of a scrape,
// which must never be decided by a local fallback — are counted in
// sluice_store_errors_total when the store fails them, as every other
// call to it is.
func TestStoreErrorsCountTheCallsPastTheFailover(t *testing.T) {
	instance := func(t *testing.T, cfg string) (*fixture, *switchedStore) {
		mem := memory.New(memory.WithSweepInterval(0))
		t.Cleanup(func() { mem.Close() })
		primary := &switchedStore{Store: mem}
		local := memory.New(memory.WithSweepInterval(0))
		t.Cleanup(func() { local.Close() })
		cache := overlimit.New(primary, overlimit.Options{})
		// A bound no loaded machine reaches: the calls that fail are the
		// ones the test fails, not ones the default 50 ms cuts short.
		fo, err := failover.New(cache, local, failover.Options{Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		f := newFixtureWith(t, cfg, func(o *server.Options) {
			o.Store, o.Failover, o.OverLimit, o.Memory = fo, fo, cache, local
		})
		return f, primary
	}
	errs := func(t *testing.T, f *fixture) float64 {
		return scrape(t, f.admin.URL)[`sluice_store_errors_total{store="redis"}`]
	}
	t.Run("settlement", func(t *testing.T) {
		f, primary := instance(t, settleConfig+testAdmin+"settle: {secret_file: "+settleSecret(t, "5e")+"}\n")
		id := checkSigned(t, f.admin)
		primary.down.Store(true)
		if r, body := postAdmin(t, f.admin, "/v1/settle", settleBody(id)); r.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("a settlement while the store is down: %d %v, want 503", r.StatusCode, body)
		}
		if n := errs(t, f); n != 1 {
			t.Errorf("sluice_store_errors_total %v after a settlement whose once-check the store failed, want 1", n)
		}
	})
	t.Run("global peek", func(t *testing.T) {
		f, primary := instance(t, settleConfig+testAdmin+"global:\n  - {name: everyone, algorithm: fixed-window, quantity: 1000000, window: 1h}\n")
		primary.down.Store(true)
		// Each scrape peeks at the global limit once; a scrape reads the
		// count before or after its own peek.
		const scrapes = 5
		var n float64
		for range scrapes {
			n = errs(t, f)
		}
		if n != scrapes-1 && n != scrapes {
			t.Errorf("sluice_store_errors_total %v after %d scrapes whose global peek the store failed, want %d or %d", n, scrapes, scrapes-1, scrapes)
		}
	})
}
