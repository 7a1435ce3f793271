package config_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// ruleCostYAML returns a configuration of one plan, free, of costs (a
// YAML flow mapping's entries) and one rule without cost: of match (and
// extra lines beside it) whose limit holds 5 a second.
func ruleCostYAML(costs, match, extra string) string {
	return "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 100, window: 1m}]\n" +
		"    costs: {" + costs + "}\n" +
		"default_plan: free\nanonymous_plan: free\n" +
		"rules:\n  - name: r\n    match: " + match + "\n" + extra +
		"    limits: [{name: per-second, algorithm: fixed-window, quantity: 5, window: 1s}]\n"
}

// firstStatus loads c and sends one request of method and path from a
// fresh client: its status.
func firstStatus(t *testing.T, c *config.Config, method, path string) int {
	t.Helper()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	mw, err := httplimit.New(sluice.NewLimiter(store), c.HTTPLimitOptions())
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = "192.0.2.7:1234"
	mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
	return w.Code
}

// wantRefusedAtCost checks that yaml is refused at the rule's limits,
// naming the cost 10 of cost; where it loads, a fresh client's request of
// method and path (which pays 10 and is the rule's) shows the harm.
func wantRefusedAtCost(t *testing.T, yaml, cost, method, path string) {
	t.Helper()
	c, err := config.Parse("r.yaml", []byte(yaml))
	if err == nil {
		t.Errorf("loaded, and a fresh client's %s %s (cost 10, under the rule's limit of 5) is a %d: such requests are refused forever; "+
			"want the rule refused at its limits", method, path, firstStatus(t, c, method, path))
		return
	}
	if want := "rules[0].limits: limit per-second holds 5, less than the 10 that " + `"` + cost + `"`; !strings.Contains(err.Error(), want) {
		t.Errorf("%v\nwant an error saying %q", err, want)
	}
}

// A rule without cost: charges its limits what a request costs, so a
// limit below a plan's cost of a route the rule meets never admits those
// requests, and the rule is refused at its limits (docs/rules.md, Cost).
// The rule meets the route where some request is both: a rule of one
// tenant's subtree meets the cost of every tenant's bulk endpoint at that
// tenant's, though a request of the cost's pattern as written, its
// wildcard filled in, is not the rule's.
func TestARuleOfPartOfACostedRouteIsRefusedAtTheCost(t *testing.T) {
	wantRefusedAtCost(t, ruleCostYAML(`"POST /v1/tenants/{t}/bulk": 10`, `{paths: ["/v1/tenants/acme/"]}`, ""),
		"POST /v1/tenants/{t}/bulk", "POST", "/v1/tenants/acme/bulk")
}

// A route's cost is charged in every reading of a request's path that
// the plan's costs weigh (docs/rules.md, Paths): POST /bulk/ pays what
// POST /bulk costs (without its trailing slash), POST /bulk what "POST
// /BULK" costs (in lower case), POST /bulk.json what POST /bulk costs
// (without its format suffix). A rule of those requests meets the cost,
// and is refused below it; and so does a rule that takes a request in
// such a reading of its own (POST /bulk/ and POST /bulk.json are the
// rule's of "/bulk").
func TestARuleIsJudgedInEveryReadingThatChargesACost(t *testing.T) {
	for _, c := range []struct{ cost, path, request string }{
		{"POST /bulk", "/bulk/", "/bulk/"},
		{"POST /bulk", "/bulk/{$}", "/bulk/"},
		{"POST /BULK", "/bulk", "/BULK"},
		{"POST /bulk", "/bulk.json", "/bulk.json"},
		{"POST /bulk/", "/bulk", "/bulk/"},
		{"POST /bulk.json", "/bulk", "/bulk.json"},
	} {
		t.Run(c.cost+" "+c.path, func(t *testing.T) {
			wantRefusedAtCost(t, ruleCostYAML(`"`+c.cost+`": 10`, `{paths: ["`+c.path+`"]}`, ""), c.cost, "POST", c.request)
		})
	}
}

// A route of no method is charged on every method, and an except: entry
// leaves out of a rule only the requests it takes: a rule that leaves
// POST out still takes GET /v1/bulk, which "/v1/bulk" charges 10.
func TestAnExceptEntryClearsARouteOnlyOfTheRequestsItTakes(t *testing.T) {
	wantRefusedAtCost(t, ruleCostYAML(`"/v1/bulk": 10`, `{paths: ["/v1/"]}`, "    except: [{methods: [POST]}]\n"),
		"/v1/bulk", "GET", "/v1/bulk")
	wantRefusedAtCost(t, ruleCostYAML(`"/v1/bulk": 10`, `{paths: ["/v1/"]}`, "    except: [{headers: [{name: X-Internal}]}]\n"),
		"/v1/bulk", "GET", "/v1/bulk")
}

// No request is both the rule's and charged the cost, so the rule loads:
// a more specific route takes the requests of the rule from the costly
// one; the rule's path goes on past the cost's; the cost is of another
// host; except: takes every request of the route; the rule's readings
// and the cost's never meet on one path.
func TestARuleThatMeetsNoRequestOfACostLoads(t *testing.T) {
	for _, c := range []struct{ name, yaml string }{
		{"a more specific route", ruleCostYAML(`"/v1/": 10, "/v1/suggest/": 1`, `{paths: ["/v1/suggest/"]}`, "")},
		{"a path past the cost's", ruleCostYAML(`"POST /bulk": 10`, `{paths: ["/bulk/{id}"]}`, "")},
		{"another host", ruleCostYAML(`"POST b.example/bulk": 10`, `{hosts: [a.example], paths: ["/bulk"]}`, "")},
		{"every method left out", ruleCostYAML(`"POST /v1/bulk": 10`, `{paths: ["/v1/"]}`, "    except: [{methods: [POST]}]\n")},
		{"the header the rule asks for left out", ruleCostYAML(`"POST /v1/bulk": 10`, `{paths: ["/v1/bulk"], headers: [{name: X-Internal}]}`,
			"    except: [{headers: [{name: X-Internal}], paths: [\"/v1/\"]}]\n")},
		{"the cost's suffix", ruleCostYAML(`"POST /bulk.json": 10`, `{paths: ["/bulk/"]}`, "")},
	} {
		if _, err := config.Parse("r.yaml", []byte(c.yaml)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// A rule without cost: charges what a request costs, and a request of a
// route its plan makes free (cost 0) is charged 0, which never counts. A
// rule every route of which is free on every plan it applies to counts
// none of the requests it is written for: it is refused at its limits,
// saying to give it a cost:, as except_paths and except: entries that
// never apply are refused: a rule of GET /v1/suggest beside a free
// "GET /v1/suggest". One of no method matches every method, and counts
// the path's POSTs, which no route prices; one that a route of the plan
// charges more, or whose paths go past the free routes, counts and loads.
func TestARuleOfFreeRoutesOnlyIsRefused(t *testing.T) {
	yaml := "plans:\n  free:\n    limits: [{name: m, algorithm: fixed-window, quantity: 1000, window: 1h}]\n" +
		"    costs: {\"GET /v1/suggest\": 0}\n" +
		"default_plan: free\nanonymous_plan: free\n" +
		"rules:\n  - name: suggest\n    match: {methods: [GET], paths: [\"/v1/suggest\"]}\n    key: [ip]\n" +
		"    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]\n"
	c, err := config.Parse("r.yaml", []byte(yaml))
	if err == nil {
		t.Errorf("loaded, and a fresh client's GET /v1/suggest is a %d, as every one after it: the rule never counts one", firstStatus(t, c, "GET", "/v1/suggest"))
	} else if want := `r.yaml:11:13: rules[0].limits: count none of the requests the rule is written for: each of its routes is free on the plans it applies to ` +
		`("GET /v1/suggest" costs 0 on plan free, plans.free.costs, line 4), which the rule charges as it sets no cost (give the rule a cost:)`; err.Error() != want {
		t.Errorf("%v\nwant exactly:\n%s", err, want)
	}
	for _, c := range []struct{ name, yaml string }{
		{"a cost of its own", ruleCostYAML(`"GET /v1/suggest": 0`, `{methods: [GET], paths: ["/v1/suggest"]}`, "    cost: 1\n")},
		{"no method: its POSTs count", ruleCostYAML(`"GET /v1/suggest": 0`, `{paths: ["/v1/suggest"]}`, "")},
		{"a broader rule", ruleCostYAML(`"GET /v1/suggest": 0`, `{paths: ["/v1/"]}`, "")},
		{"writes priced", ruleCostYAML(`"GET /v1/items": 0, "POST /v1/items": 1`, `{paths: ["/v1/items"]}`, "")},
		{"a method the free route is not of", ruleCostYAML(`"GET /v1/items": 0`, `{methods: [POST], paths: ["/v1/items"]}`, "")},
		{"a more specific route priced", ruleCostYAML(`"/v1/": 0, "POST /v1/generate": 1`, `{paths: ["/v1/"]}`, "")},
	} {
		if _, err := config.Parse("r.yaml", []byte(c.yaml)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
