package migrate_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/migrate"
)

// usagePlans is what `aws apigateway get-usage-plans` prints for two
// plans: Basic with a throttle, a monthly quota and method throttles;
// Pro with a fractional rate and a daily quota.
const usagePlans = `{
    "items": [
        {
            "id": "a1b2c3",
            "name": "Basic",
            "apiStages": [
                {
                    "apiId": "x7y8z9",
                    "stage": "prod",
                    "throttle": {
                        "/pets/{petId}/GET": {"burstLimit": 1, "rateLimit": 0.5},
                        "/files/{proxy+}/*": {"burstLimit": 2, "rateLimit": 1.0}
                    }
                }
            ],
            "throttle": {"burstLimit": 3, "rateLimit": 2.5},
            "quota": {"limit": 5000, "offset": 0, "period": "MONTH"}
        },
        {
            "id": "d4e5f6",
            "name": "Pro",
            "apiStages": [{"apiId": "x7y8z9", "stage": "prod"}],
            "throttle": {"burstLimit": 200, "rateLimit": 100.0},
            "quota": {"limit": 100000, "offset": 0, "period": "DAY"}
        }
    ]
}`

// TestImportAPIGateway: each usage plan becomes a plan (the first the
// imported one) of a token bucket and a fixed-window quota, each method
// throttle a rule on its method and path keyed by the client; API keys are
// read from X-Api-Key; the report says how to list each plan's keys.
func TestImportAPIGateway(t *testing.T) {
	if f, ok := migrate.Detect(usagePlans); !ok || f != migrate.FormatAPIGateway {
		t.Errorf("Detect: %q %v", f, ok)
	}
	tr, err := migrate.Import(migrate.FormatAPIGateway, usagePlans, "plans.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, tr, true)
	var got []string
	for _, name := range []string{migrate.PlanName, "Pro"} {
		for _, l := range cfg.Policy.Plan(name).Limits {
			got = append(got, name+" "+l.String())
		}
	}
	for _, r := range cfg.Rules {
		got = append(got, "rule "+r.Name+" "+strings.Join(r.Methods, ",")+" "+strings.Join(r.Paths, ",")+" "+strings.Join(r.Key, ",")+" "+
			strings.Join(r.Plans, ",")+" "+r.Limits[0].String())
	}
	want := []string{
		"imported throttle: token-bucket 5 per 2s burst 3",
		"imported quota-per-month: fixed-window 5000 per month",
		"Pro throttle: token-bucket 100 per 1s burst 200",
		"Pro quota-per-day: fixed-window 100000 per 24h0m0s",
		"rule imported-files-proxy  /files/{proxy...} client imported throttle: token-bucket 1 per 1s burst 2",
		"rule imported-get-pets-petId GET /pets/{petId} client imported throttle: token-bucket 1 per 2s burst 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("translated:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if h := cfg.Identity.APIKeyHeaders; len(h) != 1 || h[0] != "X-Api-Key" {
		t.Errorf("API key headers %q, want X-Api-Key", h)
	}
	report := tr.Report()
	for _, want := range []string{"--usage-plan-id 'a1b2c3'", "plan: imported}", "--usage-plan-id 'd4e5f6'", "plan: Pro}",
		"per calendar month of UTC from the 1st", "of plan imported, on /pets/{petId}"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// A method throttle of rate 0 (none) leaves the others of its stage.
	tr, err = migrate.Import(migrate.FormatAPIGateway, `{"id": "p", "name": "p", "apiStages": [{"apiId": "x", "stage": "s", "throttle": {
		"/a/GET": {"rateLimit": 0, "burstLimit": 1}, "/b/GET": {"rateLimit": 1, "burstLimit": 1}}}]}`, "plan.json")
	if err != nil {
		t.Errorf("a rate-0 method throttle beside another: %v", err)
	} else if len(tr.SluiceRules) != 1 || tr.SluiceRules[0].Paths[0] != "/b" {
		t.Errorf("a rate-0 method throttle beside another: rules %+v, want /b's alone", tr.SluiceRules)
	}
	for _, bad := range []string{`{"items": [{"name": "x", "quota": {"limit": 5, "period": "YEAR"}}]}`,
		`{"items": [{"name": "x", "throttle": {"rateLimit": -1, "burstLimit": 1}}]}`,
		`{"items": [{"name": "x", "apiStages": [{"stage": "s", "throttle": {"pets/GET": {"rateLimit": 1, "burstLimit": 1}}}]}]}`,
		`{"items": [{"name": "x", "apiStages": [{"stage": "s", "throttle": {"/pets/{pet-id}/GET": {"rateLimit": 1, "burstLimit": 1}}}]}]}`,
		`{"items": []}`, `[1, 2]`, `{"items": [{"name": "x"}]} {}`} {
		if _, err := migrate.Import(migrate.FormatAPIGateway, bad, "bad.json"); err == nil {
			t.Errorf("%s: imported", bad)
		}
	}
}

// TestImportedAPIGatewayDecides serves an import: the plan's bucket of 3
// per API key, the GET /pets/{petId} throttle of 1 (other methods
// untouched), each key apart.
func TestImportedAPIGatewayDecides(t *testing.T) {
	// Rates of one request per 100 s: no token comes back during the test,
	// however slow the machine.
	tr, err := migrate.Import(migrate.FormatAPIGateway, `{"id": "b", "name": "Basic", "throttle": {"burstLimit": 3, "rateLimit": 0.01},
		"apiStages": [{"apiId": "x", "stage": "prod", "throttle": {"/pets/{petId}/GET": {"burstLimit": 1, "rateLimit": 0.01}}}]}`, "plans.json")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	for i, c := range []struct {
		method, path, key string
		want              int
	}{
		{"GET", "/pets", "k1", 200},
		{"GET", "/pets", "k1", 200},
		{"GET", "/pets", "k1", 200},
		{"GET", "/pets", "k1", 429}, // the plan's burst of 3
		{"GET", "/pets", "k2", 200}, // another key, its own bucket
		{"GET", "/pets/7", "k3", 200},
		{"GET", "/pets/7", "k3", 429}, // the method's burst of 1
		{"DELETE", "/pets/7", "k3", 200},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		r.Header.Set("X-Api-Key", c.key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("request %d, %s %s key %s: %d, want %d", i, c.method, c.path, c.key, w.Code, c.want)
		}
	}
}

// TestImportedAPIGatewayRootAndAnyThrottles: the root resource's method
// throttle ("//GET") limits GET / alone, and an ANY method's ("/pets/ANY")
// every method of its resource, as API Gateway applies them.
func TestImportedAPIGatewayRootAndAnyThrottles(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatAPIGateway, `{"id": "b", "name": "Basic", "throttle": {"burstLimit": 10, "rateLimit": 0.01},
		"apiStages": [{"apiId": "x", "stage": "prod", "throttle": {
			"//GET": {"burstLimit": 1, "rateLimit": 0.01},
			"/pets/ANY": {"burstLimit": 2, "rateLimit": 0.01}}}]}`, "plans.json")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	for i, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/", 200},
		{"GET", "/", 429},        // the root's burst of 1
		{"GET", "/other", 200},   // not the root resource
		{"GET", "/pets", 200},    // ANY: one bucket for every method
		{"DELETE", "/pets", 200}, // the second of its burst of 2
		{"POST", "/pets", 429},
		{"GET", "/pets/7", 200}, // another resource
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		r.Header.Set("X-Api-Key", "k1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("request %d, %s %s: %d, want %d", i, c.method, c.path, w.Code, c.want)
		}
	}
}

// TestImportedAPIGatewayMethodThrottlesKeepToTheirPlan serves two usage
// plans with their keys listed: Basic's throttle of GET /pets/{petId}
// limits Basic's keys, not Pro's.
func TestImportedAPIGatewayMethodThrottlesKeepToTheirPlan(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatAPIGateway, `{"items": [
		{"id": "b", "name": "Basic", "throttle": {"burstLimit": 5, "rateLimit": 0.01},
		 "apiStages": [{"apiId": "x", "stage": "prod", "throttle": {"/pets/{petId}/GET": {"burstLimit": 1, "rateLimit": 0.01}}}]},
		{"id": "p", "name": "Pro", "throttle": {"burstLimit": 5, "rateLimit": 0.01}, "apiStages": [{"apiId": "x", "stage": "prod"}]}]}`, "plans.json")
	if err != nil {
		t.Fatal(err)
	}
	keys := "keys:\n"
	for _, k := range []struct{ name, plan string }{{"basic-key", migrate.PlanName}, {"pro-key", "Pro"}} {
		keys += fmt.Sprintf("  - {name: %s, sha256: %x, plan: %s}\n", k.name, sha256.Sum256([]byte(k.name)), k.plan)
	}
	h := serveImported(t, tr, keys)
	var got []int
	for _, key := range []string{"basic-key", "basic-key", "pro-key", "pro-key", "pro-key"} {
		r := httptest.NewRequest("GET", "/pets/7", nil)
		r.Header.Set("X-Api-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	if want := []int{200, 429, 200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("GET /pets/7 by Basic's key ×2, Pro's ×3: %v, want %v (the method throttle of Basic's alone)", got, want)
	}
}

// TestAPIGatewayBucketIsTheTokenBucket: the limit imported from a throttle
// decides, request by request, as API Gateway's token bucket does (a
// bucket of burstLimit tokens, full at first, refilled at rateLimit a
// second, one token a request), here computed exactly in rationals, on
// random arrivals at microsecond instants, for fractional rates too.
func TestAPIGatewayBucketIsTheTokenBucket(t *testing.T) {
	for _, th := range []struct {
		rate  string
		burst int64
	}{{"2.5", 3}, {"0.5", 1}, {"10", 20}, {"0.333", 2}, {"1000", 5}} {
		tr, err := migrate.Import(migrate.FormatAPIGateway,
			`{"id": "p", "name": "p", "apiStages": [], "throttle": {"rateLimit": `+th.rate+`, "burstLimit": `+itoa(th.burst)+`}}`, "plan.json")
		if err != nil {
			t.Fatal(err)
		}
		limit := load(t, tr, true).Policy.Plan(migrate.PlanName).Limits[0]

		start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		now := start
		store := memory.New(memory.WithClock(func() time.Time { return now }), memory.WithSweepInterval(0))
		lim := sluice.NewLimiter(store)
		rate, _ := new(big.Rat).SetString(th.rate)
		tokens, last := new(big.Rat).SetInt64(th.burst), start
		rng := rand.New(rand.NewPCG(uint64(th.burst), 7))
		// Gaps of 0.8 token times on average: arrivals a little faster than
		// the refill, so that the bucket is sometimes full, sometimes empty.
		perToken := time.Duration(float64(time.Second) / mustFloat(rate))
		admitted := 0
		for i := range 2000 {
			now = now.Add(time.Duration(rng.Int64N(int64(perToken)*8/5+1)) / time.Microsecond * time.Microsecond)
			elapsed := new(big.Rat).SetFrac64(now.Sub(last).Microseconds(), 1_000_000)
			tokens.Add(tokens, elapsed.Mul(elapsed, rate))
			if tokens.Cmp(new(big.Rat).SetInt64(th.burst)) > 0 {
				tokens.SetInt64(th.burst)
			}
			last = now
			want := tokens.Cmp(big.NewRat(1, 1)) >= 0
			if want {
				tokens.Sub(tokens, big.NewRat(1, 1))
				admitted++
			}
			var d sluice.Decision
			if err := lim.Allow(context.Background(), []sluice.Check{{Key: "k", Limit: limit, Cost: 1}}, &d); err != nil {
				t.Fatal(err)
			}
			if d.Allowed != want {
				t.Fatalf("rate %s burst %d, request %d at +%v: sluice allowed %v, the token bucket %v (tokens %s)",
					th.rate, th.burst, i, now.Sub(start), d.Allowed, want, tokens.FloatString(6))
			}
		}
		store.Close()
		if admitted < 200 || admitted > 1800 {
			t.Errorf("rate %s burst %d: the trace admitted %d of 2000: it must refuse and admit often to compare", th.rate, th.burst, admitted)
		}
	}
}

func mustFloat(r *big.Rat) float64 { f, _ := r.Float64(); return f }

func itoa(n int64) string { return big.NewInt(n).String() }

// usagePlansTemplate is usagePlans as a CloudFormation template: the same
// two plans as resources, with short-form tags, a parameter's default for
// a rate, and an API and stage named by !Ref.
const usagePlansTemplate = `AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  BasicRate: {Type: Number, Default: 2.5}
Resources:
  PetsApi:
    Type: AWS::ApiGateway::RestApi
    Properties: {Name: pets}
  BasicPlan:
    Type: AWS::ApiGateway::UsagePlan
    Properties:
      UsagePlanName: Basic
      Throttle: {BurstLimit: 3, RateLimit: !Ref BasicRate}
      Quota: {Limit: 5000, Offset: 0, Period: MONTH}
      ApiStages:
        - ApiId: !Ref PetsApi
          Stage: prod
          Throttle:
            "/pets/{petId}/GET": {BurstLimit: 1, RateLimit: 0.5}
            "/files/{proxy+}/*": {BurstLimit: 2, RateLimit: 1}
  ProPlan:
    Type: AWS::ApiGateway::UsagePlan
    Properties:
      UsagePlanName: Pro
      ApiStages: [{ApiId: !Ref PetsApi, Stage: prod}]
      Throttle: {BurstLimit: 200, RateLimit: 100}
      Quota: {Limit: 100000, Period: DAY}
`

// TestImportAPIGatewayCloudFormation: a CloudFormation template's usage
// plans, in YAML or JSON, translate as the CLI's output of the same plans
// does; the report lists each plan's keys through its stack.
func TestImportAPIGatewayCloudFormation(t *testing.T) {
	describe := func(tr *migrate.Translation) []string {
		cfg := load(t, tr, true)
		var got []string
		for _, name := range []string{migrate.PlanName, "Pro"} {
			for _, l := range cfg.Policy.Plan(name).Limits {
				got = append(got, name+" "+l.String())
			}
		}
		for _, r := range cfg.Rules {
			got = append(got, "rule "+r.Name+" "+strings.Join(r.Methods, ",")+" "+strings.Join(r.Paths, ",")+" "+strings.Join(r.Plans, ",")+" "+r.Limits[0].String())
		}
		return got
	}
	cli, err := migrate.Import(migrate.FormatAPIGateway, usagePlans, "plans.json")
	if err != nil {
		t.Fatal(err)
	}
	want := describe(cli)
	jsonTemplate := `{"Resources": {"BasicPlan": {"Type": "AWS::ApiGateway::UsagePlan", "Properties": {"UsagePlanName": "Basic",
		"Throttle": {"BurstLimit": 3, "RateLimit": 2.5}, "Quota": {"Limit": 5000, "Period": "MONTH"},
		"ApiStages": [{"ApiId": {"Ref": "PetsApi"}, "Stage": "prod", "Throttle": {"/pets/{petId}/GET": {"BurstLimit": 1, "RateLimit": 0.5},
		"/files/{proxy+}/*": {"BurstLimit": 2, "RateLimit": 1}}}]}},
		"ProPlan": {"Type": "AWS::ApiGateway::UsagePlan", "Properties": {"UsagePlanName": "Pro", "Throttle": {"BurstLimit": 200, "RateLimit": 100},
		"Quota": {"Limit": 100000, "Period": "DAY"}}}}}`
	for name, src := range map[string]string{"yaml": usagePlansTemplate, "json": jsonTemplate} {
		if f, ok := migrate.Detect(src); !ok || f != migrate.FormatAPIGateway {
			t.Errorf("%s: Detect: %q %v", name, f, ok)
		}
		tr, err := migrate.Import(migrate.FormatAPIGateway, src, "template."+name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := describe(tr); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s template:\n%s\nwant, as from the CLI:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if r := tr.Report(); !strings.Contains(r, "--logical-resource-id 'BasicPlan'") || !strings.Contains(r, "STACK") {
			t.Errorf("%s: the report does not list the keys through the stack:\n%s", name, r)
		}
	}
	for _, bad := range []string{
		"Resources: {P: {Type: AWS::ApiGateway::UsagePlan, Properties: {Throttle: {RateLimit: !GetAtt X.Rate, BurstLimit: 1}}}}",
		"Resources: {P: {Type: AWS::ApiGateway::UsagePlan, Properties: {Quota: {Limit: !Ref Missing, Period: DAY}}}}",
		"Resources: {A: {Type: AWS::Serverless::Api, Properties: {Auth: {UsagePlan: {CreateUsagePlan: PER_API}}}}}",
	} {
		if _, err := migrate.Import(migrate.FormatAPIGateway, bad, "bad.yaml"); err == nil {
			t.Errorf("%s: imported", bad)
		}
	}
}

// TestImportAPIGatewayErrorsNameTheLine: JSON the import cannot read is
// refused with the line of the first thing it cannot read, as every
// importer's errors name it.
func TestImportAPIGatewayErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ src, line string }{
		{"{\"items\": [\n  {\"name\": \"a\",\n   \"throttle\": {\"rateLimit\": 1, \"burstLimit\": \"x\"}}]}", "line 3"},
		{"{\"items\": [\n  {\"name\": \"a\",\n   \"throttle\": {\"rateLimit\": 1, \"burstLimit\": 2}},\n,]}", "line 4"},
		{"{\"items\": [\n  {\"name\": \"a\"}]", "line 2"},
	} {
		_, err := migrate.Import("aws-apigateway", c.src, "plans.json")
		if err == nil || !strings.Contains(err.Error(), c.line) {
			t.Errorf("%q: err = %v, want it to name %s", c.src, err, c.line)
		}
	}
}
