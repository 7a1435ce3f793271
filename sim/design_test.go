package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
)

// testBudget keeps the designs of these tests quick (under the race
// detector too); TestDesignScalesLargeRequirements and the command's tests
// use the default.
const testBudget = 30_000

func design(t *testing.T, req Requirements) *Analysis {
	t.Helper()
	if req.MaxArrivals == 0 {
		req.MaxArrivals = testBudget
	}
	a, err := Design(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string { slices.Sort(s); return s }

// checkConfigShape parses the generated YAML as plain maps and checks it has
// exactly the fields of the config schema, an identity that counts unlisted
// keys by address, and that every limit builds a valid sluice.Limit.
func checkConfigShape(t *testing.T, cfg string) []sluice.Limit {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(cfg), &doc); err != nil {
		t.Fatalf("config is not YAML: %v\n%s", err, cfg)
	}
	if got := keys(doc); !slices.Equal(got, sorted("store", "identity", "plans", "default_plan")) {
		t.Fatalf("top-level fields %v", got)
	}
	if id := doc["identity"].(map[string]any); len(id) != 1 || id["unknown_keys"] != "ip" {
		t.Errorf("identity %v, want unknown_keys: ip alone (no keys are listed: a made-up key counts by address)", id)
	}
	store := doc["store"].(map[string]any)
	switch store["type"] {
	case "memory":
		if got := keys(store); !slices.Equal(got, []string{"type"}) && !slices.Equal(got, sorted("type", "max_keys")) {
			t.Errorf("memory store fields %v", got)
		}
	case "redis":
		if got := keys(store); !slices.Equal(got, sorted("type", "redis")) && !slices.Equal(got, sorted("type", "max_keys", "redis")) {
			t.Errorf("redis store fields %v", got)
		}
		r := store["redis"].(map[string]any)
		if got := keys(r); !slices.Equal(got, sorted("mode", "addresses", "on_store_error", "instances")) {
			t.Errorf("redis fields %v", got)
		}
		if addrs, ok := r["addresses"].([]any); !ok || len(addrs) == 0 {
			t.Errorf("addresses %v", r["addresses"])
		}
	default:
		t.Fatalf("store type %v", store["type"])
	}
	if doc["default_plan"] != "default" {
		t.Errorf("default_plan %v", doc["default_plan"])
	}
	plans := doc["plans"].(map[string]any)
	if got := keys(plans); !slices.Equal(got, []string{"default"}) {
		t.Fatalf("plans %v", got)
	}
	plan := plans["default"].(map[string]any)
	if got := keys(plan); !slices.Equal(got, []string{"limits"}) {
		t.Fatalf("plan fields %v", got)
	}
	var out []sluice.Limit
	for _, e := range plan["limits"].([]any) {
		lm := e.(map[string]any)
		for _, k := range keys(lm) {
			if !slices.Contains([]string{"name", "algorithm", "quantity", "window", "burst", "max_wait", "zone", "starts"}, k) {
				t.Errorf("unknown limit field %q", k)
			}
		}
		alg, err := sluice.ParseAlgorithm(lm["algorithm"].(string))
		if err != nil {
			t.Fatal(err)
		}
		var l sluice.Limit
		if p, ok := map[string]sluice.Period{"day": sluice.Day, "week": sluice.Week, "month": sluice.Month, "year": sluice.Year}[lm["window"].(string)]; ok {
			if alg != sluice.AlgorithmFixedWindow {
				t.Fatalf("a calendar window of %v", alg)
			}
			l = sluice.Calendar(int64(lm["quantity"].(int)), p) // zone and starts: config.Parse checks them
		} else {
			w, err := time.ParseDuration(lm["window"].(string))
			if err != nil {
				t.Fatalf("window %v: %v", lm["window"], err)
			}
			l = sluice.NewLimit(alg, int64(lm["quantity"].(int)), w)
		}
		if b, ok := lm["burst"]; ok {
			l = l.WithBurst(int64(b.(int)))
		}
		if mw, ok := lm["max_wait"]; ok {
			d, err := time.ParseDuration(mw.(string))
			if err != nil {
				t.Fatal(err)
			}
			l = l.WithMaxWait(d)
		}
		l = l.Named(lm["name"].(string))
		if err := l.Err(); err != nil {
			t.Fatalf("limit %v does not build: %v", lm, err)
		}
		out = append(out, l)
	}
	if len(out) != 1 {
		t.Fatalf("%d limits, want 1", len(out))
	}
	return out
}

func TestDesignRecommendations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   Requirements
		limit string // sluice.Limit.String of the config's limit
		store string
	}{
		{"loose precision gets a fixed window",
			Requirements{Rate: "100/1m", Precision: "loose"}, "per-minute: fixed-window 100 per 1m0s", "memory"},
		{"approximate precision gets the exact log when it is small",
			Requirements{Rate: "100/1m"}, "per-minute: sliding-window-log 100 per 1m0s", "memory"},
		{"approximate precision without room for a log gets a nine-tenths GCRA",
			Requirements{Rate: "100000/1h", Keys: 1e6}, "per-hour: gcra 90001 per 1h0m0s burst 10000", "memory"},
		{"loose precision with a burst cap gets GCRA of Q and B",
			Requirements{Rate: "10/1s", Burst: 3, Precision: "loose"}, "per-second: gcra 10 per 1s burst 3", "memory"},
		{"strict precision gets the exact log when it fits",
			Requirements{Rate: "100/1m", Precision: "strict", Keys: 10_000}, "per-minute: sliding-window-log 100 per 1m0s", "memory"},
		{"strict precision without room for a log gets a half-bucket GCRA",
			Requirements{Rate: "100/1m", Precision: "strict", Keys: 1e9, Instances: 2}, "per-minute: gcra 51 per 1m0s burst 50", "redis"},
		{"strict precision with a burst cap gets GCRA of Q-B+1 and B",
			Requirements{Rate: "100/1m", Precision: "strict", Burst: 20, Instances: 3}, "per-minute: gcra 81 per 1m0s burst 20", "redis"},
		{"a burst cap gets GCRA of Q-B+1 and B",
			Requirements{Rate: "10/1s", Burst: 3, Name: "api"}, "api: gcra 8 per 1s burst 3", "memory"},
		{"memory on several instances divides the quota",
			Requirements{Rate: "1000/24h", Instances: 4, Store: "memory"}, "per-day: sliding-window-log 250 per 24h0m0s", "memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := design(t, tc.req)
			limits := checkConfigShape(t, a.Config)
			if got := limits[0].String(); got != tc.limit {
				t.Errorf("config limit %q, want %q", got, tc.limit)
			}
			if a.Recommendation.Store != tc.store {
				t.Errorf("store %s, want %s", a.Recommendation.Store, tc.store)
			}
			// The real configuration loader accepts it, with the same limit.
			cfg, err := config.Parse("design.yaml", []byte(a.Config))
			if err != nil {
				t.Fatalf("config.Parse: %v\n%s", err, a.Config)
			}
			plan := cfg.Policy.Plan("default")
			if plan == nil || len(plan.Limits) != 1 || plan.Limits[0].String() != tc.limit || cfg.Store.Type != tc.store {
				t.Fatalf("loaded %+v, store %s", plan, cfg.Store.Type)
			}
			if tc.store == "redis" && cfg.Store.Redis.Instances != tc.req.Instances {
				t.Errorf("redis instances %d, want %d", cfg.Store.Redis.Instances, tc.req.Instances)
			}
			// The analysis states the figures and carries the config.
			for _, want := range []string{"## Context", "## Recommendation", "### Simulated figures", "## Trade-offs", "## Next steps", a.Config} {
				if !strings.Contains(a.Markdown, want) {
					t.Errorf("markdown lacks %q", want)
				}
			}
			if len(a.Scenarios) != 4 {
				t.Fatalf("%d scenarios", len(a.Scenarios))
			}
		})
	}
}

// A strict or approximate requirement's recommendation never admits more
// than the limit in any window of any simulated pattern, and the analysis
// says so.
func TestDesignsNeverExceedTheLimit(t *testing.T) {
	for _, req := range []Requirements{
		{Rate: "100/1m"},
		{Rate: "10/1s", Burst: 3},
		{Rate: "100/1m", Keys: 1e9},
		{Rate: "100/1m", Precision: "strict"},
		{Rate: "100/1m", Precision: "strict", Burst: 20},
		{Rate: "7/3s", Precision: "strict", Burst: 2},
		{Rate: "100/1m", Precision: "strict", Keys: 1e9},
	} {
		a := design(t, req)
		for _, sc := range a.Scenarios {
			f := a.figure(sc.Pattern, a.Recommendation.Label)
			if f == nil {
				t.Fatalf("%+v: no row %q in %s", req, a.Recommendation.Label, sc.Pattern)
			}
			if f.WorstWindow > sc.Result.Quantity {
				t.Errorf("%+v, %s: %s admitted %d in a window, above %d", req, sc.Pattern, f.Label, f.WorstWindow, sc.Result.Quantity)
			}
		}
		if !strings.Contains(a.Markdown, "never above the limit") {
			t.Errorf("%+v: the analysis does not state the simulated guarantee", req)
		}
	}
}

func TestDesignScalesLargeRequirements(t *testing.T) {
	a := design(t, Requirements{Rate: "1000000/1s", Burst: 5000, Keys: 5, MaxArrivals: scenarioBudget})
	if a.Scale.Quantity > scenarioQuantity || a.Scale.Factor != 1000 || a.Scale.Burst != 5 {
		t.Fatalf("scale %+v", a.Scale)
	}
	for _, sc := range a.Scenarios {
		if sc.Result.Requests > 2*scenarioBudget {
			t.Errorf("%s: %d requests", sc.Pattern, sc.Result.Requests)
		}
	}
	if !strings.Contains(a.Markdown, "To stay quick the simulations used 1000 per 1s") {
		t.Error("the analysis does not say it simulated at a smaller scale")
	}
}

func TestReadRequirements(t *testing.T) {
	req, err := ReadRequirements(strings.NewReader("rate: 100/1m\nburst: 20\nprecision: strict\nkeys: 10000\ninstances: 3\nstore: auto\n"), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if req.Rate != "100/1m" || req.Burst != 20 || req.Precision != "strict" || req.Keys != 10000 || req.Instances != 3 {
		t.Fatalf("read %+v", req)
	}
	_, err = ReadRequirements(strings.NewReader("rate: 100/1m\nbursts: 20\n"), "r.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "r.yaml:2:1: bursts: unknown field") {
		t.Fatalf("unknown field: %v", err)
	}
	for name, bad := range map[string]Requirements{
		"no rate":       {},
		"bad precision": {Rate: "1/1s", Precision: "exactish"},
		"bad store":     {Rate: "1/1s", Store: "disk"},
		"bad name":      {Rate: "1/1s", Name: "per minute"},
	} {
		if _, err := Design(context.Background(), bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A quota per calendar month is designed as the calendar fixed window at
// every precision; its configuration loads as sluice.Calendar, and the
// analysis states what was measured: never more than the quota in one
// month, up to twice it within 31 days across a month's start.
func TestDesignCalendarQuota(t *testing.T) {
	for _, precision := range []string{PrecisionApproximate, PrecisionStrict, PrecisionLoose} {
		a := design(t, Requirements{Rate: "10000/month", Precision: precision})
		rec := a.Recommendation
		if rec.Algorithm != "fixed-window" || rec.Period != "month" || rec.Quantity != 10000 || rec.Name != "per-month" {
			t.Fatalf("%s: recommended %+v", precision, rec)
		}
		checkConfigShape(t, a.Config)
		cfg, err := config.Parse("design.yaml", []byte(a.Config))
		if err != nil {
			t.Fatalf("config.Parse: %v\n%s", err, a.Config)
		}
		want := sluice.Calendar(10000, sluice.Month)
		plan := cfg.Policy.Plan("default")
		if plan == nil || len(plan.Limits) != 1 {
			t.Fatalf("loaded %+v", plan)
		}
		if l := plan.Limits[0]; l.Period() != want.Period() || l.Quantity() != want.Quantity() || l.Algorithm() != want.Algorithm() || l.Offset() != 0 || l.Name() != "per-month" {
			t.Errorf("%s: loaded %v, want %v", precision, l, want)
		}
		// Every scenario measured both figures; the calendar window never
		// admitted more than the quota in one month, and the boundary
		// burst got twice it through within 31 days.
		q := a.Scale.Quantity
		for _, sc := range a.Scenarios {
			if sc.Result.Period != "month" || sc.Result.Window.D() != 31*24*time.Hour {
				t.Fatalf("%s: simulated against %s per %v", sc.Pattern, sc.Result.Limit, sc.Result.Window)
			}
			f := a.figure(sc.Pattern, rec.Label)
			if f == nil || f.Limit != sluice.Calendar(q, sluice.Month).String() {
				t.Fatalf("%s: the recommendation %q was not simulated as %v: %+v", sc.Pattern, rec.Label, want, f)
			}
			if f.WorstPeriod > q || f.WorstPeriod == 0 {
				t.Errorf("%s: %d in one month, against %d", sc.Pattern, f.WorstPeriod, q)
			}
			if log := a.figure(sc.Pattern, "sliding-window-log"); log.WorstWindow > q || log.WorstPeriod > q {
				t.Errorf("%s: the exact log admitted %d in 31 days, %d in a month", sc.Pattern, log.WorstWindow, log.WorstPeriod)
			}
		}
		if f := a.figure(PatternBoundaryBurst, rec.Label); f.WorstWindow != 2*q || f.WorstPeriod != q {
			t.Errorf("boundary-burst: %d within 31 days, %d in a month; want %d and %d", f.WorstWindow, f.WorstPeriod, 2*q, q)
		}
		for _, s := range []string{
			"# Rate-limit design: 10000 per month per key",
			"**fixed-window, 10000 per month**",
			fmt.Sprintf("its worst calendar month admitted %d of %d (never above the quota", q, q),
			fmt.Sprintf("it admitted up to %d within 31 days (+100%%; under boundary-burst)", 2*q),
			fmt.Sprintf("| **fixed-window (month)** (recommended) | %d | %d | %d | %d | %d (+100%%) |", q, q, q, q, 2*q),
			"window: month",
			"-limit 10000/month",
		} {
			if !strings.Contains(a.Markdown, s) {
				t.Errorf("%s: the analysis lacks %q", precision, s)
			}
		}
		if strings.Contains(a.Markdown, "744h") {
			t.Errorf("%s: the analysis names the month by its longest length in hours", precision)
		}
	}
}

// A zone and a first day reach the configuration, and the simulations
// measure the periods they shift.
func TestDesignCalendarQuotaInAZone(t *testing.T) {
	req, err := ReadRequirements(strings.NewReader("rate: 5000/month\nzone: \"+09:00\"\nstarts: 15\nstore: redis\n"), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := design(t, req)
	cfg, err := config.Parse("design.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, a.Config)
	}
	want := sluice.Calendar(5000, sluice.Month).WithOffset(14*24*time.Hour - 9*time.Hour)
	if l := cfg.Policy.Plan("default").Limits[0]; l.String() != want.String() {
		t.Errorf("loaded %v, want %v", l, want)
	}
	for _, sc := range a.Scenarios {
		if sc.Result.Offset.D() != want.Offset() {
			t.Errorf("%s: simulated periods offset by %v", sc.Pattern, sc.Result.Offset)
		}
	}
	if f := a.figure(PatternBoundaryBurst, a.Recommendation.Label); f.WorstPeriod != a.Scale.Quantity || f.WorstWindow != 2*a.Scale.Quantity {
		t.Errorf("boundary-burst across the shifted starts: %d in a month, %d in 31 days", f.WorstPeriod, f.WorstWindow)
	}
	if !strings.Contains(a.Markdown, "from 00:00 UTC+09:00 on the 15th") || !strings.Contains(a.Markdown, "5000 per month (from the 15th, UTC+09:00)") {
		t.Errorf("the analysis does not say when the month starts:\n%s", a.Markdown)
	}
	if !strings.Contains(a.Markdown, "sluice simulate -trace requests.csv -limit 5000/month ") || !strings.Contains(a.Markdown, " -zone +09:00 -starts 15 ") {
		t.Errorf("the replay command does not carry the zone and start:\n%s", a.Markdown)
	}
	for name, bad := range map[string]Requirements{
		"a burst":         {Rate: "10000/month", Burst: 100},
		"a zone on 1m":    {Rate: "100/1m", Zone: "+09:00"},
		"starts on years": {Rate: "100/year", Starts: "3"},
	} {
		if _, err := Design(context.Background(), bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A name YAML would read as something else than a string ("null" as
// nothing, "-" as a sequence) is quoted, so that the configuration loads
// and names the limit as asked.
func TestDesignConfigLoadsWhateverTheName(t *testing.T) {
	for _, name := range []string{"null", "Null", "NULL", "-", "true", "123", "per-minute"} {
		a := design(t, Requirements{Rate: "10/1s", Name: name, MaxArrivals: 5000})
		cfg, err := config.Parse("design.yaml", []byte(a.Config))
		if err != nil {
			t.Errorf("name %q: %v\n%s", name, err, a.Config)
			continue
		}
		if got := cfg.Policy.Plans[0].Limits[0].Name(); got != name {
			t.Errorf("name %q loads as %q", name, got)
		}
	}
}
