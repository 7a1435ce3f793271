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
	f, err := reloadTwoAlgorithmsOnRedis(t, redisStoreSection)
	errs := config.Errors(err)
	if len(errs) != 1 || errs[0].Path != "plans.pro.limits[0].name" ||
		!strings.Contains(errs[0].Msg, "also the ID of plans.free.limits[0]") || !strings.Contains(errs[0].Msg, "start each afresh") {
		t.Fatalf("reload: %v; want it refused at plans.pro.limits[0].name, naming plans.free.limits[0]", err)
	}
	f.inForceAfterRefusal(t)
}

// A reload is judged by the store running, not by the file's store
// section, which is read at start only: a server started on Redis that
// reloads a file saying store: {type: memory}, in which one limit ID is
// counted by two algorithms, still decides on Redis, so the reload is
// refused at pro's limit, naming free's and the store running, and
// changes nothing.
func TestReloadOnRedisRefusesALimitIDOfTwoAlgorithmsWhateverTheFileSaysOfTheStore(t *testing.T) {
	f, err := reloadTwoAlgorithmsOnRedis(t, "store: {type: memory}\n")
	errs := config.Errors(err)
	if len(errs) != 1 || errs[0].Path != "plans.pro.limits[0]" || !strings.Contains(errs[0].Msg, "also the ID of plans.free.limits[0]") ||
		!strings.Contains(errs[0].Msg, "the store running is Redis") || !strings.Contains(errs[0].Msg, "start each afresh") {
		t.Fatalf("reload: %v; want it refused at plans.pro.limits[0], naming plans.free.limits[0] and the store running", err)
	}
	f.inForceAfterRefusal(t)
}

// redisStoreSection is a file's store section naming Redis.
const redisStoreSection = "store:\n  type: redis\n  redis: {addresses: [\"127.0.0.1:6379\"]}\n"

// reloadTwoAlgorithmsOnRedis starts a server on Redis, spends free's 3 a
// minute, and reloads a file with the store section fileStore in which
// free's per-minute allows 10 and pro's is a GCRA (free's a fixed
// window): it returns the fixture and the reload's error.
func reloadTwoAlgorithmsOnRedis(t *testing.T, fileStore string) (*algorithmsFixture, error) {
	t.Helper()
	f := newFixture(t, testConfig+redisStoreSection, "redis")
	for i := range 3 { // free: 3 a minute, all spent
		if r := f.do(t, "GET", "/a", "", freeKey); r.StatusCode != 200 {
			t.Fatalf("request %d: %d", i+1, r.StatusCode)
		}
	}
	text := realtest.Replace(t, "testConfig", testConfig,
		"{name: per-minute, algorithm: fixed-window, quantity: 3,", "{name: per-minute, algorithm: fixed-window, quantity: 10,",
		"{name: per-minute, algorithm: fixed-window, quantity: 100,", "{name: per-minute, algorithm: gcra, quantity: 100,")
	if err := os.WriteFile(f.file, []byte("upstream: "+f.srv.Config().Upstream+"\n"+text+fileStore+testAdmin), 0o644); err != nil {
		t.Fatal(err)
	}
	return &algorithmsFixture{f}, f.srv.Reload()
}

// freeKey is the header of a free plan's client.
var freeKey = map[string]string{"X-API-Key": "demo-free-key"}

// algorithmsFixture is a fixture whose reload of two algorithms under one
// ID was refused.
type algorithmsFixture struct{ *fixture }

// inForceAfterRefusal checks that the refused reload changed nothing: pro's
// per-minute is still a fixed window, and free's client, its 3 a minute
// spent, is refused.
func (f *algorithmsFixture) inForceAfterRefusal(t *testing.T) {
	t.Helper()
	if pro := f.srv.Config().Policy.Plan("pro"); pro.Limits[0].Algorithm() != sluice.AlgorithmFixedWindow {
		t.Errorf("pro's per-minute in force after the refusal: %v, want the old fixed window", pro.Limits[0])
	}
	if r := f.do(t, "GET", "/a", "", freeKey); r.StatusCode != 429 {
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
