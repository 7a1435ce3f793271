package httplimit_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// ordersOrBilling is a rule of 3 per minute per client over two routes
// that differ in host and path: /orders on a.example, /billing on
// b.example.
func ordersOrBilling(key ...string) httplimit.Rule {
	return httplimit.Rule{Name: "api", Any: []httplimit.Match{
		{Hosts: []string{"a.example"}, Paths: []string{"/orders"}},
		{Hosts: []string{"b.example"}, Paths: []string{"/billing"}},
	}, Key: key, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}}
}

func TestRuleAlternativesShareOneCount(t *testing.T) {
	mw, _ := rulesMiddleware(t, ordersOrBilling())
	a := req{path: "http://a.example/orders"}
	b := req{path: "http://b.example/billing"}
	got := statuses(mw, a, a, b, a, b)
	if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("a.example/orders ×2, b.example/billing, then one of each: %v, want %v (3 a minute across both)", got, want)
	}
	h := mw.Handler(okHandler())
	for _, other := range []string{"http://a.example/billing", "http://b.example/orders", "http://c.example/orders"} {
		w := do(h, req{path: other})
		if w.Code != 200 || strings.Contains(w.Header().Get("RateLimit-Policy"), "api.") {
			t.Errorf("%s: %d, RateLimit-Policy %q: the rule's (it is neither alternative's)", other, w.Code, w.Header().Get("RateLimit-Policy"))
		}
	}
}

func TestRuleAlternativesShareOneCountThroughDecideFor(t *testing.T) {
	mw, _ := rulesMiddleware(t, ordersOrBilling())
	ctx := context.Background()
	decide := func(host, path string) (allowed bool, rules []string) {
		t.Helper()
		res, err := mw.DecideFor(ctx, httplimit.Requester{Subject: "s", Host: host}, "GET", path, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer mw.Discard(res)
		return res.Decision.Allowed, res.Rules()
	}
	var got []bool
	for _, c := range [][2]string{{"a.example", "/orders"}, {"b.example", "/billing"}, {"b.example", "/billing"}, {"a.example", "/orders"}} {
		ok, _ := decide(c[0], c[1])
		got = append(got, ok)
	}
	if want := []bool{true, true, true, false}; !slices.Equal(got, want) {
		t.Fatalf("allowed %v, want %v", got, want)
	}
	if ok, rules := decide("a.example", "/billing"); !ok || len(rules) != 0 {
		t.Errorf("a.example/billing: allowed %v, rules %q; want allowed by no rule", ok, rules)
	}
}

// TestRuleAlternativesRouteKey: "route" is the pattern of the alternative
// that matched, each its own count; of two alternatives that match, the
// first listed.
func TestRuleAlternativesRouteKey(t *testing.T) {
	r := ordersOrBilling("route")
	r.Any = append(r.Any, httplimit.Match{Paths: []string{"/{any...}"}})
	mw, _ := rulesMiddleware(t, r)
	a := req{path: "http://a.example/orders"}
	b := req{path: "http://b.example/billing"}
	c := req{path: "http://c.example/other"}
	got := statuses(mw, a, a, a, b, a, b, b, b, c, c, c, c)
	if want := []int{200, 200, 200, 200, 429, 200, 200, 429, 200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v (a count per route: /orders, /billing, the third alternative's)", got, want)
	}
}

func TestRuleAlternativesPathKey(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Any: []httplimit.Match{
		{Hosts: []string{"a.example"}, Paths: []string{"/t/{tenant}/orders"}},
		{Hosts: []string{"b.example"}, Paths: []string{"/billing/{tenant}"}},
	}, Key: []string{"path:tenant"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got := statuses(mw, req{path: "http://a.example/t/acme/orders"}, req{path: "http://b.example/billing/acme"},
		req{path: "http://b.example/billing/globex"})
	if want := []int{200, 429, 200}; !slices.Equal(got, want) {
		t.Fatalf("acme on a, acme on b, globex on b: %v, want %v", got, want)
	}
}

func TestRuleAlternativesValidate(t *testing.T) {
	limits := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
	plans := []*httplimit.Plan{{Name: "free", Limits: limits}}
	for _, c := range []struct {
		name string
		rule httplimit.Rule
		want string
	}{
		{"a wildcard one alternative lacks", httplimit.Rule{Name: "r", Any: []httplimit.Match{
			{Paths: []string{"/t/{tenant}"}}, {Paths: []string{"/u/{user}"}},
		}, Key: []string{"path:tenant"}, Limits: limits}, `Rules[0].Key[0]: "path:tenant": path "/u/{user}" has no wildcard {tenant}`},
		{"a wildcard of an alternative without paths", httplimit.Rule{Name: "r", Any: []httplimit.Match{
			{Paths: []string{"/t/{tenant}"}}, {Hosts: []string{"b.example"}},
		}, Key: []string{"path:tenant"}, Limits: limits}, `Rules[0].Key[0]: "path:tenant": alternative 2 of 2 has no paths to take wildcard "tenant" from`},
		{"a bad path of an alternative", httplimit.Rule{Name: "r", Any: []httplimit.Match{
			{Paths: []string{"/a"}}, {Paths: []string{"b"}},
		}, Limits: limits}, `Rules[0].Any[1].Paths[0]: "b": a path pattern starts with "/"`},
		{"a bad host of an alternative", httplimit.Rule{Name: "r", Any: []httplimit.Match{
			{Hosts: []string{"a.example:8080"}},
		}, Limits: limits}, `Rules[0].Any[0].Hosts[0]: "a.example:8080" never matches`},
		{"alternatives beside the flat fields", httplimit.Rule{Name: "r", Paths: []string{"/a"}, Any: []httplimit.Match{
			{Paths: []string{"/b"}},
		}, Limits: limits}, `Rules[0].Any: a rule matches by Any or by its own Methods, Paths, ExceptPaths, Hosts and Headers, not both`},
	} {
		err := httplimit.Options{Plans: plans, Rules: []httplimit.Rule{c.rule}}.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// A request matched by a rule's second alternative, keyed by its route,
// allocates less than once on average, as a request of a rule of one
// match does: the alternatives are tried in place. A guard: alternatives
// have allocated nothing since they were added.
func TestRuleAlternativesMatchWithoutAllocating(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts mean nothing under the race detector (sync.Pool drops items)")
	}
	cfg := hotPlan(t, 1)
	store := memory.New(memory.WithSweepInterval(0))
	defer store.Close()
	o := quiet(cfg)
	big := []sluice.Limit{sluice.FixedWindow(1_000_000_000, time.Minute)}
	o.Rules = []httplimit.Rule{{Name: "api", Any: []httplimit.Match{
		{Hosts: []string{"a.example"}, Paths: []string{"/orders/{id}"}},
		{Methods: []string{"POST"}, Hosts: []string{"api.example"}, Paths: []string{"/v1/items/{id}"}},
	}, Key: []string{"route", "path:id"}, Limits: big}}
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	r, _ := http.NewRequest("POST", "http://api.example/v1/items/42", nil)
	r.Header.Set("X-API-Key", "the-key")
	n, w := allocsPerServe(h, r)
	if n >= 1 { // n is rounded down
		t.Errorf("%.0f allocations per admitted request, want less than 1", n)
	}
	if w.status != 200 || !strings.Contains(strings.Join(w.h["Ratelimit-Policy"], ","), "api.") {
		t.Errorf("status %d, headers %v: not the rule's", w.status, w.h)
	}
}
