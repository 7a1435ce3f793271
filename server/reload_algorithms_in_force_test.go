package server_test

import (
	"os"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
)

// A reload is judged by the store running, not by the file's store
// section, which is read at start only: a server started on Redis that
// reloads a file saying store: {type: memory}, in which one limit ID is
// counted by two algorithms (free's per-minute a fixed window, pro's turned
// into a GCRA), still decides on Redis, which keeps one state per client
// and ID, so the reload is refused at pro's limit, naming free's and the
// store running. The refusal changes nothing: the configuration in force
// stays (free's 3 a minute, not the file's 10), and what clients spent
// stays spent.
func TestReloadOnRedisRefusesALimitIDOfTwoAlgorithmsWhateverTheFileSaysOfTheStore(t *testing.T) {
	const onRedis = "store:\n  type: redis\n  redis: {addresses: [\"127.0.0.1:6379\"]}\n"
	f := newFixture(t, testConfig+onRedis, "redis")
	key := map[string]string{"X-API-Key": "demo-free-key"}
	for i := range 3 { // free: 3 a minute, all spent
		if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 200 {
			t.Fatalf("request %d: %d", i+1, r.StatusCode)
		}
	}
	text := realtest.Replace(t, "testConfig", testConfig,
		"{name: per-minute, algorithm: fixed-window, quantity: 3,", "{name: per-minute, algorithm: fixed-window, quantity: 10,",
		"{name: per-minute, algorithm: fixed-window, quantity: 100,", "{name: per-minute, algorithm: gcra, quantity: 100,")
	file := "upstream: " + f.srv.Config().Upstream + "\n" + text + "store: {type: memory}\n" + testAdmin
	if err := os.WriteFile(f.file, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	err := f.srv.Reload()
	errs := config.Errors(err)
	if len(errs) != 1 || errs[0].Path != "plans.pro.limits[0]" || !strings.Contains(errs[0].Msg, "also the ID of plans.free.limits[0]") ||
		!strings.Contains(errs[0].Msg, "the store running is Redis") || !strings.Contains(errs[0].Msg, "start each afresh") {
		t.Fatalf("reload: %v; want it refused at plans.pro.limits[0], naming plans.free.limits[0] and the store running", err)
	}
	if pro := f.srv.Config().Policy.Plan("pro"); pro.Limits[0].Algorithm() != sluice.AlgorithmFixedWindow {
		t.Errorf("pro's per-minute in force after the refusal: %v, want the old fixed window", pro.Limits[0])
	}
	if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 429 {
		t.Errorf("free's fourth request after the refusal: %d, want 429 (the old 3 a minute, its 3 spent)", r.StatusCode)
	}
	f.noStoreErrors(t)
}

// A server started on memory, which keeps a state per client, ID and
// algorithm, reloads a configuration whose plans count one ID by two
// algorithms (its file saying memory, as the store running is): the new
// limits are in force.
func TestReloadOnMemoryAcceptsALimitIDOfTwoAlgorithms(t *testing.T) {
	f := newFixture(t, testConfig)
	text := realtest.Replace(t, "testConfig", testConfig,
		"{name: per-minute, algorithm: fixed-window, quantity: 100,", "{name: per-minute, algorithm: gcra, quantity: 100,")
	file := "upstream: " + f.srv.Config().Upstream + "\n" + text + "store: {type: memory}\n" + testAdmin
	if err := os.WriteFile(f.file, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Reload(); err != nil {
		t.Fatalf("reload on memory: %v", err)
	}
	if pro := f.srv.Config().Policy.Plan("pro"); pro.Limits[0].Algorithm() != sluice.AlgorithmGCRA {
		t.Errorf("pro's per-minute in force after the reload: %v, want the file's gcra", pro.Limits[0])
	}
}
