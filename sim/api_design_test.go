package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
)

// apiRequirements is a whole API: two plans of several limits with traffic,
// an expensive endpoint, an exempt health check, an internal caller, a
// global capacity and overload thresholds.
const apiRequirements = `
name: Acme API
identity: {api_keys: true, user_header: X-User-ID, trusted_proxies: [127.0.0.1/32]}
capacity: 2000/1s
plans:
  - name: free
    clients: 10000
    traffic: {rate: 20/1m, peak: 3}
    limits: [{rate: 20/1s, burst: 5}, {rate: 100/1m}, {rate: 5000/1d, precision: loose}]
    upgrade: pro
  - name: pro
    clients: 500
    traffic: {rate: 5/1s, peak: 2}
    limits: [{rate: 50/1s, burst: 20}, {rate: 2000/1m, precision: strict}]
endpoints:
  - {route: "POST /api/generate", cost: 10, class: expensive}
  - {route: "GET /api/export", limit: 10/1h}
  - {route: "POST /api/pay", class: critical}
  - {route: "GET /healthz", class: health, exempt: true}
internal:
  - {name: billing-batch, rate: 50/1s}
overload: {in_flight: 500, p99: 2s, error_rate: 0.1}
`

// testArrivals bounds each simulated scenario of the tests' designs (a
// third of DesignAPI's default), to keep them quick under -race.
const testArrivals = 20_000

func designAPI(t *testing.T, text string) *APIAnalysis {
	t.Helper()
	req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req.MaxArrivals = testArrivals
	a, err := DesignAPI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// acme is the design of apiRequirements, made once for the tests that only
// read it.
var acme = sync.OnceValues(func() (*APIAnalysis, error) {
	req, err := ReadAPIRequirements(strings.NewReader(apiRequirements), "api.yaml")
	if err != nil {
		return nil, err
	}
	req.MaxArrivals = testArrivals
	return DesignAPI(context.Background(), req)
})

func designAcme(t *testing.T) *APIAnalysis {
	t.Helper()
	a, err := acme()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestDesignAPIWritesTheFiveSectionsInOrder(t *testing.T) {
	a := designAcme(t)
	at := -1
	for _, s := range append(APISections(), "## Configuration") {
		i := strings.Index(a.Markdown, "\n"+s+"\n")
		if i < 0 {
			t.Fatalf("no section %q", s)
		}
		if i < at {
			t.Errorf("section %q out of order", s)
		}
		at = i
	}
	for _, want := range []string{"### Key strategy", "### Store and failure policy", "### Headers and refusals",
		"### Endpoints", "### Global limit", "### Internal callers", "### Degradation tiers", "shadow: true",
		`sluice_decisions_total{result="shadow"}`, "GET /api/export`: its own limit of 10/1h per client is the rule `get-api-export`", a.Config} {
		if !strings.Contains(a.Markdown, want) {
			t.Errorf("the analysis lacks %q", want)
		}
	}
}

// Every recommended limit was simulated against its stated requirement,
// and none but the loose one admitted more than it states in any window of
// any scenario.
func TestDesignAPINeverExceedsAStatedLimitUnlessLoose(t *testing.T) {
	a := designAcme(t)
	limits := 0
	check := func(plan string, d LimitDesign) {
		limits++
		if len(d.Analysis.Scenarios) != 4 {
			t.Errorf("%s %s: %d scenarios simulated", plan, d.Stated, len(d.Analysis.Scenarios))
		}
		for _, sc := range d.Analysis.Scenarios {
			f := d.Analysis.figure(sc.Pattern, d.Rec().Label)
			if f == nil {
				t.Fatalf("%s %s: the recommendation was not simulated in %s", plan, d.Stated, sc.Pattern)
			}
			if d.Precision != PrecisionLoose && f.WorstWindow > sc.Result.Quantity {
				t.Errorf("%s %s (%s): %s admitted %d in one window of %s, above %d",
					plan, d.Stated, d.Precision, f.Label, f.WorstWindow, sc.Pattern, sc.Result.Quantity)
			}
		}
		if d.Precision == PrecisionLoose && d.Worst <= d.WorstOf {
			t.Errorf("%s %s: loose fixed window never exceeded the limit (%d of %d): the boundary burst went unsimulated", plan, d.Stated, d.Worst, d.WorstOf)
		}
	}
	for _, p := range a.Plans {
		for _, l := range p.Limits {
			check(p.Name, l)
		}
	}
	for _, r := range a.Rules {
		check("rule "+r.Name, r.Limit)
	}
	check("global", *a.Global)
	// free ×3, pro ×2, anonymous ×3, internal ×1, GET /api/export's rule, global.
	if limits != 11 {
		t.Errorf("%d limits designed, want 11", limits)
	}
}

// The configuration loads with package config's own loader, and it holds
// what the analysis promises.
func TestDesignAPIConfigLoads(t *testing.T) {
	a := designAcme(t)
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("%v\n%s", err, a.Config)
	}
	if cfg.Policy.DefaultPlan != "free" || cfg.Policy.AnonymousPlan != "anonymous" {
		t.Errorf("default %q, anonymous %q", cfg.Policy.DefaultPlan, cfg.Policy.AnonymousPlan)
	}
	for _, p := range a.Plans {
		got := cfg.Policy.Plan(p.Name)
		if got == nil || len(got.Limits) != len(p.Limits) {
			t.Fatalf("plan %s: loaded %+v", p.Name, got)
		}
		for i, l := range p.Limits {
			rec := l.Rec()
			gl := got.Limits[i]
			if gl.Name() != rec.Name || gl.Algorithm().String() != rec.Algorithm || gl.Quantity() != rec.Quantity || gl.Window() != rec.Window.D() {
				t.Errorf("plan %s: loaded %s, designed %+v", p.Name, gl, rec)
			}
		}
		if cost := got.Costs["POST /api/generate"]; !p.Internal && cost != 10 {
			t.Errorf("plan %s: POST /api/generate costs %d", p.Name, cost)
		}
	}
	// GET /api/export's own 10/1h is a rule keyed by client, costing 1.
	if len(cfg.Rules) != 1 || cfg.Rules[0].Name != "get-api-export" || len(cfg.Rules[0].Limits) != 1 ||
		cfg.Rules[0].Limits[0].Quantity() != 10 || cfg.Rules[0].Cost == nil || *cfg.Rules[0].Cost != 1 {
		t.Errorf("rules %+v", cfg.Rules)
	}
	if len(cfg.Policy.Global) != 1 || cfg.Policy.Global[0].Name() != "global" {
		t.Errorf("global %v", cfg.Policy.Global)
	}
	if !cfg.Degradation.Enabled || len(cfg.Degradation.Expensive) != 1 || len(cfg.Exempt) != 1 {
		t.Errorf("degradation %+v, exempt %v", cfg.Degradation, cfg.Exempt)
	}
	if cfg.Identity.PlanHeader != "X-Plan" || cfg.Identity.UserHeader != "X-User-Id" || cfg.Identity.UnknownKeys != "ip" {
		t.Errorf("identity %+v", cfg.Identity)
	}
}

func TestDesignAPIShadowWritesEveryLimitShadowed(t *testing.T) {
	a := designAPI(t, "shadow: true\ncapacity: 100/1s\nplans: [{name: free, limits: [{rate: 10/1s}, {rate: 100/1h}]}]\n")
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cfg.Policy.Plans {
		for _, l := range p.Limits {
			if !l.Shadow() {
				t.Errorf("plan %s: %s enforces", p.Name, l)
			}
		}
	}
}

func TestDesignAPIResolvesACostAboveTheStatedBurst(t *testing.T) {
	a := designAPI(t, `
plans:
  - name: free
    limits: [{rate: 20/1s, burst: 5}]
endpoints:
  - {route: "POST /api/generate", cost: 10}
`)
	rec := a.Plans[0].Limits[0].Rec()
	if rec.Burst != 10 || rec.Quantity != 11 {
		t.Errorf("recommended %+v, want a burst of 10 (the cost) refilled at 11", rec)
	}
	if len(a.Warnings) == 0 || !strings.Contains(a.Markdown, "the burst is raised to 10") {
		t.Errorf("the analysis does not say the burst was raised: %v", a.Warnings)
	}
	if _, err := config.Parse("api.yaml", []byte(a.Config)); err != nil {
		t.Fatal(err)
	}
}

func TestDesignAPIRefusesImpossibleRequirements(t *testing.T) {
	for name, text := range map[string]string{
		"no plans":               "name: x\n",
		"a cost above a limit":   "plans: [{name: free, limits: [{rate: 5/1s, burst: 2}]}]\nendpoints: [{route: POST /x, cost: 10}]\n",
		"a cost above a window":  "plans: [{name: free, limits: [{rate: 5/1s, precision: strict}]}]\nendpoints: [{route: POST /x, cost: 10}]\n",
		"two limits of one name": "plans: [{name: free, limits: [{rate: 5/1s}, {rate: 10/1s}]}]\n",
		"an unknown upgrade":     "plans: [{name: free, upgrade: gold, limits: [{rate: 5/1s}]}]\n",
		"an upgrade to itself":   "plans: [{name: free, upgrade: free, limits: [{rate: 5/1s}]}]\n",
		"a bad route":            "plans: [{name: free, limits: [{rate: 5/1s}]}]\nendpoints: [{route: /x, cost: 2}]\n",
		"a bad priority":         "priority: speed\nplans: [{name: free, limits: [{rate: 5/1s}]}]\n",
		"a bad proxy":            "identity: {trusted_proxies: [nope]}\nplans: [{name: free, limits: [{rate: 5/1s}]}]\n",
		"an unknown field":       "plans: [{name: free, limits: [{rate: 5/1s}], colour: red}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
			if err == nil {
				_, err = DesignAPI(context.Background(), req)
			}
			if err == nil {
				t.Fatal("designed")
			}
		})
	}
}

func TestIsAPIRequirements(t *testing.T) {
	if !IsAPIRequirements([]byte(apiRequirements)) || IsAPIRequirements([]byte("rate: 100/1m\n")) || IsAPIRequirements([]byte("- a\n")) {
		t.Error("IsAPIRequirements tells a whole API from one limit wrongly")
	}
}

// A plan's monthly quota beside its per-second limit: the quota is a
// calendar fixed window, the configuration loads it as one, the headers
// state it without a window length, and the analysis names the month and
// the measured figures.
func TestDesignAPICalendarQuota(t *testing.T) {
	a := designAPI(t, `
name: Billing API
identity: {api_keys: true}
plans:
  - name: pro
    clients: 200
    traffic: {rate: 2/1s, peak: 2}
    limits: [{rate: 50/1s}, {rate: 100000/month}]
  - name: team
    limits: [{rate: 10/1s, burst: 5}, {rate: 500000/month, zone: "+09:00", starts: 15}]
`)
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("%v\n%s", err, a.Config)
	}
	for plan, want := range map[string]sluice.Limit{
		"pro":       sluice.Calendar(100000, sluice.Month),
		"team":      sluice.Calendar(500000, sluice.Month).WithOffset(14*24*time.Hour - 9*time.Hour),
		"anonymous": sluice.Calendar(10000, sluice.Month), // a tenth of the default plan's
	} {
		p := cfg.Policy.Plan(plan)
		if p == nil || len(p.Limits) != 2 {
			t.Fatalf("plan %s: loaded %+v", plan, p)
		}
		if l := p.Limits[1]; l.Period() != want.Period() || l.Quantity() != want.Quantity() || l.Offset() != want.Offset() || l.Name() != "per-month" {
			t.Errorf("plan %s: loaded %v, want %v", plan, l, want)
		}
	}
	for _, p := range a.Plans {
		d := p.Limits[1]
		if d.Period != "month" || d.Rec().Algorithm != "fixed-window" {
			t.Fatalf("plan %s: designed %+v", p.Name, d.Rec())
		}
		// Measured, never more than the quota in one month; twice it
		// within 31 days across a month's start.
		if d.Worst > d.WorstOf || d.Worst == 0 || d.Across != 2*d.WorstOf || d.AcrossPattern != PatternBoundaryBurst {
			t.Errorf("plan %s: %d of %d in a month, %d in 31 days under %s", p.Name, d.Worst, d.WorstOf, d.Across, d.AcrossPattern)
		}
		for _, sc := range d.Analysis.Scenarios {
			if f := d.Analysis.figure(sc.Pattern, d.Rec().Label); f.WorstPeriod > sc.Result.Quantity {
				t.Errorf("plan %s, %s: %d in one month, above %d", p.Name, sc.Pattern, f.WorstPeriod, sc.Result.Quantity)
			}
		}
		if !strings.HasSuffix(a.PolicyHeader(p.Name), `, "per-month";q=`+fmt.Sprint(d.Rec().Quantity)) { // no w: months differ in length
			t.Errorf("plan %s: RateLimit-Policy %s", p.Name, a.PolicyHeader(p.Name))
		}
	}
	if pf := a.Plans[0].Limits[1].Profile; pf == nil || pf.Scale <= 1 || pf.Duration.D() != 310*24*time.Hour || pf.Refused == 0 {
		t.Errorf("pro's monthly quota at its peak traffic (4/s, about 10 million a month): %+v", pf)
	}
	for _, s := range []string{
		"100000/month (approximate)", "500000/month from the 15th, UTC+09:00 (approximate)",
		"fixed-window, 100000 per month", "fixed-window, 500000 per month (from the 15th, UTC+09:00)",
		"pro per-month is a quota per calendar month", "The plan's per-second bounds how fast it is spent",
		"-limit 50/1s",
	} {
		if !strings.Contains(a.Markdown, s) {
			t.Errorf("the analysis lacks %q", s)
		}
	}
	if strings.Contains(a.Markdown, "744h") {
		t.Error("the analysis names a month by its longest length in hours")
	}
}

// Plans and limits named as YAML reads something else than a string
// ("null", "true") are quoted: the configuration loads with their names.
func TestDesignAPIConfigLoadsWhateverTheNames(t *testing.T) {
	a := designAPI(t, `
name: names
plans:
  - {name: "null", clients: 10, limits: [{rate: 10/1s, name: "null"}], upgrade: "true"}
  - {name: "true", clients: 10, limits: [{rate: 20/1s, name: "123"}]}
`)
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("%v\n%s", err, a.Config)
	}
	if cfg.Policy.DefaultPlan != "null" {
		t.Errorf("default plan %q", cfg.Policy.DefaultPlan)
	}
	for plan, limit := range map[string]string{"null": "null", "true": "123"} {
		p := cfg.Policy.Plan(plan)
		if p == nil || p.Limits[0].Name() != limit {
			t.Errorf("plan %q: %+v", plan, p)
		}
	}
}

// A plan whose clients send too little to hit a short limit in ten of its
// windows is designed all the same: its profile replays no request and
// says so, 0 refused of 0.
func TestDesignAPIProfileOfTooLittleTrafficIsEmpty(t *testing.T) {
	a := designAPI(t, `
name: Quiet API
plans:
  - name: basic
    clients: 100
    traffic: {rate: 1/1m, peak: 2}
    limits: [{rate: 10/1s}]
`)
	p := a.Plans[0].Limits[0].Profile
	if p == nil || p.Requests != 0 || p.Refused != 0 || p.Duration.D() != 10*time.Second {
		t.Fatalf("profile %+v, want 0 requests over 10s", p)
	}
	if want := "0% refused of 0 at 0.0333/s over 10s"; !strings.Contains(a.Markdown, want) {
		t.Errorf("markdown lacks %q:\n%s", want, a.Markdown)
	}
}

// An exempt route is never limited: a limit or cost stated for it would be
// dropped from the configuration, so the requirements are refused, naming
// the endpoint.
func TestDesignAPIRefusesALimitOnAnExemptRoute(t *testing.T) {
	for name, endpoint := range map[string]string{
		"a limit":        `{route: "GET /healthz", exempt: true, limit: 10/1m}`,
		"a plan's limit": `{route: "GET /healthz", exempt: true, limits: {free: 10/1m}}`,
		"a cost":         `{route: "GET /healthz", exempt: true, cost: 2}`,
	} {
		t.Run(name, func(t *testing.T) {
			text := "plans: [{name: free, limits: [{rate: 5/1s}]}]\nendpoints: [" + endpoint + "]\n"
			req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
			if err == nil {
				var a *APIAnalysis
				if a, err = DesignAPI(context.Background(), req); err == nil {
					t.Fatalf("designed:\n%s", a.Config)
				}
			}
			if !strings.Contains(err.Error(), "endpoints[0]") || !strings.Contains(err.Error(), "exempt") {
				t.Errorf("%v: want endpoints[0] and exempt named", err)
			}
		})
	}
}

// Whatever an endpoint's route, the design is refused naming it or writes
// a configuration that loads: a standard method in lower case never
// matches, and the loader refuses it.
func TestDesignAPIRoutesLoadOrAreRefused(t *testing.T) {
	for _, tc := range []struct {
		route   string
		refused bool
	}{
		{"get /x", true},
		{"Post /x", true},
		{"GET /x", false},
		{"PURGE /x", false},
	} {
		for _, field := range []string{"cost: 2", "limit: 5/1m", "class: expensive"} {
			text := fmt.Sprintf("plans: [{name: free, limits: [{rate: 50/1s}]}]\nendpoints: [{route: %q, %s}]\n", tc.route, field)
			req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
			var a *APIAnalysis
			if err == nil {
				a, err = DesignAPI(context.Background(), req)
			}
			switch {
			case tc.refused && err == nil:
				t.Errorf("%s, %s: designed:\n%s", tc.route, field, a.Config)
			case tc.refused && !strings.Contains(err.Error(), "endpoints[0].route"):
				t.Errorf("%s, %s: %v, want endpoints[0].route named", tc.route, field, err)
			case !tc.refused && err != nil:
				t.Errorf("%s, %s: %v", tc.route, field, err)
			case !tc.refused:
				if _, err := config.Parse("api.yaml", []byte(a.Config)); err != nil {
					t.Errorf("%s, %s: the configuration does not load: %v\n%s", tc.route, field, err, a.Config)
				}
			}
		}
	}
}

// A route's cost is one number: two endpoints costing the same route are
// refused, naming the second, where one cost would silently replace the
// other; two limits on one route are two rules, both enforced.
func TestDesignAPIRefusesARouteCostTwice(t *testing.T) {
	text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\nendpoints: [{route: GET /x, cost: 2}, {route: GET /x, cost: 3}]\n"
	req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
	if err == nil {
		var a *APIAnalysis
		if a, err = DesignAPI(context.Background(), req); err == nil {
			t.Fatalf("designed:\n%s", a.Config)
		}
	}
	if !strings.Contains(err.Error(), "endpoints[1].cost") {
		t.Errorf("%v: want endpoints[1].cost named", err)
	}
	a := designAPI(t, "plans: [{name: free, limits: [{rate: 50/1s}]}]\nendpoints: [{route: GET /x, limit: 5/1m, cost: 2}, {route: GET /x, limit: 100/1h}]\n")
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("%v\n%s", err, a.Config)
	}
	if n := len(cfg.Rules); n != 2 {
		t.Errorf("%d rules, want the two limits of GET /x:\n%s", n, a.Config)
	}
}

// A memory store holds every client's state of every limit: a whole API
// of more than the store's default 1,000,000 states gets a max_keys that
// holds them, as a single limit's design does, or live clients' states
// would be evicted and their quotas start afresh.
func TestDesignAPIMemoryStoreHoldsEveryClientsStates(t *testing.T) {
	a := designAPI(t, `
store: memory
plans:
  - name: big
    clients: 2000000
    limits: [{rate: 5/1s}, {rate: 2000/1d, precision: loose}]
`)
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("%v\n%s", err, a.Config)
	}
	if want := 2_000_000 * 2; cfg.Store.MaxKeys < want {
		t.Errorf("max_keys %d, want at least %d (2,000,000 clients × 2 limits):\n%s", cfg.Store.MaxKeys, want, a.Config)
	}
}
