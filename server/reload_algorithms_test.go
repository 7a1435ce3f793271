package server_test

import (
	"os"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
)

// On a Redis store, a reload to a configuration in which one limit ID is
// counted by two algorithms (free's per-minute a fixed window, pro's
// turned into a GCRA) is refused, at the later limit, naming the earlier:
// Redis keeps one state per client and ID, and a client decided under both
// plans in turn would start each afresh. The refusal changes nothing: the
// configuration in force stays (free's 3 a minute, not the file's 10), and
// what clients spent stays spent.
func TestReloadRefusesALimitIDOfTwoAlgorithmsOnRedis(t *testing.T) {
	// The file says the store is Redis, which the configuration is judged
	// by; the fixture serves on a Redis of its own (a store section is
	// read at start, never dialled by a reload).
	const store = "store:\n  type: redis\n  redis: {addresses: [\"127.0.0.1:6379\"]}\n"
	f := newFixture(t, testConfig+store, "redis")
	key := map[string]string{"X-API-Key": "demo-free-key"}
	for i := range 3 { // free: 3 a minute, all spent
		if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 200 {
			t.Fatalf("request %d: %d", i+1, r.StatusCode)
		}
	}
	text := realtest.Replace(t, "testConfig", testConfig,
		"{name: per-minute, algorithm: fixed-window, quantity: 3,", "{name: per-minute, algorithm: fixed-window, quantity: 10,",
		"{name: per-minute, algorithm: fixed-window, quantity: 100,", "{name: per-minute, algorithm: gcra, quantity: 100,")
	if err := os.WriteFile(f.file, []byte("upstream: "+f.srv.Config().Upstream+"\n"+text+store+testAdmin), 0o644); err != nil {
		t.Fatal(err)
	}
	err := f.srv.Reload()
	errs := config.Errors(err)
	if len(errs) != 1 || errs[0].Path != "plans.pro.limits[0].name" ||
		!strings.Contains(errs[0].Msg, "also the ID of plans.free.limits[0]") || !strings.Contains(errs[0].Msg, "start each afresh") {
		t.Fatalf("reload: %v; want it refused at plans.pro.limits[0].name, naming plans.free.limits[0]", err)
	}
	if pro := f.srv.Config().Policy.Plan("pro"); pro.Limits[0].Algorithm() != sluice.AlgorithmFixedWindow {
		t.Errorf("pro's per-minute in force after the refusal: %v, want the old fixed window", pro.Limits[0])
	}
	if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 429 {
		t.Errorf("free's fourth request after the refusal: %d, want 429 (the old 3 a minute, its 3 spent)", r.StatusCode)
	}
	f.noStoreErrors(t)
}
