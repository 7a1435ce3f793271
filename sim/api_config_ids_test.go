package sim

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// twoPlansOfOneWindow are plans whose one limit takes one name (per-minute)
// and, by each plan's precision, another algorithm: free's a fixed-window,
// pro's a gcra; the anonymous plan's, free's divided, a fixed-window too.
const twoPlansOfOneWindow = `
name: Two plans
store: %s
instances: 3
identity: {api_keys: true}
plans:
  - name: free
    clients: 1000
    traffic: {rate: 20/1m, peak: 2}
    limits: [{rate: 100/1m, precision: loose}]
  - name: pro
    clients: 100
    traffic: {rate: 200/1m, peak: 2}
    limits: [{rate: 2000/1m, burst: 50}%s]
overload: {in_flight: 500}
`

// designedLoads parses a's configuration with package config's loader,
// which refuses on Redis a limit ID of two algorithms, and returns its
// plans.
func designedLoads(t *testing.T, a *APIAnalysis) *httplimit.Policy {
	t.Helper()
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("the designed configuration does not load: %v\n%s", err, a.Config)
	}
	return cfg.Policy
}

// limitOf returns the limit called name of plan in p, failing without one.
func limitOf(t *testing.T, p *httplimit.Policy, plan, name string) (id, algorithm string) {
	t.Helper()
	pl := p.Plan(plan)
	if pl == nil {
		t.Fatalf("no plan %s", plan)
	}
	for _, l := range pl.Limits {
		if l.Name() == name {
			return l.ID(), l.Algorithm().String()
		}
	}
	t.Fatalf("plan %s has no limit %s", plan, name)
	return "", ""
}

// On Redis, a plan's limit whose name a limit of another algorithm of a
// plan before it takes gets an id: "<name>-<algorithm>", with a comment
// saying why, so that the configuration loads (config refuses one ID of two
// algorithms there: Redis keeps one state per client and ID); the limit met
// first, and every other of its algorithm, keeps the name as ID, as the
// memory store would share their state. Names, and so headers and metrics,
// are unchanged.
func TestDesignedRedisConfigGivesALimitOfAnotherAlgorithmAnIDOfItsOwn(t *testing.T) {
	a := designAPI(t, strings.NewReplacer("%s]", "]", "%s", "redis").Replace(twoPlansOfOneWindow))
	p := designedLoads(t, a)
	for _, c := range []struct{ plan, id, algorithm string }{
		{"free", "per-minute", "fixed-window"},
		{"pro", "per-minute-gcra", "gcra"},
		{"anonymous", "per-minute", "fixed-window"},
	} {
		if id, alg := limitOf(t, p, c.plan, "per-minute"); id != c.id || alg != c.algorithm {
			t.Errorf("plan %s's per-minute: id %s, a %s; want id %s, a %s", c.plan, id, alg, c.id, c.algorithm)
		}
	}
	if !strings.Contains(a.Config, "id: per-minute-gcra   # a state apart from free's per-minute, a fixed-window: Redis keeps one state per client and id") {
		t.Errorf("the configuration does not say why pro's per-minute takes an id:\n%s", a.Config)
	}
}

// An id given on Redis takes no name or ID another limit of the
// configuration has: a plan's own limit already called
// "per-minute-gcra" leaves its pro's per-minute "per-minute-gcra-2".
func TestDesignedRedisIDApartTakesNoNameAlreadyTaken(t *testing.T) {
	a := designAPI(t, strings.NewReplacer("%s]", ", {rate: 10/1s, name: per-minute-gcra}]", "%s", "redis").Replace(twoPlansOfOneWindow))
	p := designedLoads(t, a)
	if id, _ := limitOf(t, p, "pro", "per-minute"); id != "per-minute-gcra-2" {
		t.Errorf("pro's per-minute: id %s, want per-minute-gcra-2", id)
	}
	if id, _ := limitOf(t, p, "pro", "per-minute-gcra"); id != "per-minute-gcra" {
		t.Errorf("pro's per-minute-gcra: id %s", id)
	}
}

// On memory, which keeps a state per ID and algorithm, the design writes
// no id: each limit's ID is its name.
func TestDesignedMemoryConfigWritesNoID(t *testing.T) {
	a := designAPI(t, strings.NewReplacer("%s]", "]", "%s", "memory").Replace(twoPlansOfOneWindow))
	p := designedLoads(t, a)
	if id, alg := limitOf(t, p, "pro", "per-minute"); id != "per-minute" || alg != "gcra" {
		t.Errorf("pro's per-minute: id %s, a %s", id, alg)
	}
	if strings.Contains(a.Config, "id:") {
		t.Errorf("the memory store's configuration writes an id:\n%s", a.Config)
	}
}

// The whole API of the design tests (plans of several limits, an
// anonymous plan, an internal caller named by a plan header, a rule and a
// global limit) designed for Redis loads, every limit as designed.
func TestDesignAPIConfigLoadsOnRedis(t *testing.T) {
	a := designAPI(t, "store: redis\ninstances: 3\n"+apiRequirements)
	p := designedLoads(t, a)
	if a.Store != "redis" {
		t.Fatalf("designed for %s", a.Store)
	}
	for _, d := range a.Plans {
		got := p.Plan(d.Name)
		if got == nil || len(got.Limits) != len(d.Limits) {
			t.Fatalf("plan %s: loaded %+v", d.Name, got)
		}
		for i, l := range d.Limits {
			rec, gl := l.Rec(), got.Limits[i]
			if gl.Name() != rec.Name || gl.Algorithm().String() != rec.Algorithm || gl.Quantity() != rec.Quantity {
				t.Errorf("plan %s: loaded %s, designed %+v", d.Name, gl, rec)
			}
		}
	}
}
