package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A cost no request can be charged is refused at its line: a pattern
// whose host has a port (ServeMux matches a request's host without one),
// and a route of a host an exempt route takes whole, on every method and
// path (exempt requests spend nothing). The same host is refused in exempt
// routes and degradation classes, which ServeMux matches alike. A cost of
// a route a narrower exempt route names is charged all the same to the
// requests that respell it (a trailing slash, path parameters, a method in
// another case: httplimit reads costs so, and exempt routes as ServeMux
// does): it was refused as never applying, and loads now.
func TestCostsThatNeverApplyAreRefused(t *testing.T) {
	const plan = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m, burst: 10}]\n"
	for _, c := range []struct{ yaml, want string }{
		{plan + "    costs: {\"POST api.example.com:8443/v1/generate\": 5}\n",
			`t.yaml:4:13: plans.free.costs.POST api.example.com:8443/v1/generate: "POST api.example.com:8443/v1/generate" never matches: a request's host is matched without its port (write "POST api.example.com/v1/generate")`},
		{"exempt: [\"GET [::1]:9000/healthz\"]\n" + plan,
			`t.yaml:1:10: exempt[0]: "GET [::1]:9000/healthz" never matches: a request's host is matched without its port`},
		{plan + "degradation: {classes: {expensive: [\"example.com:80/x\"]}}\n",
			`t.yaml:4:37: degradation.classes.expensive[0]: "example.com:80/x" never matches: a request's host is matched without its port`},
		{plan + "    costs: {\"POST internal.example.com/jobs/{id}\": 2}\nexempt: {routes: [\"GET /healthz\", \"internal.example.com/\"]}\n",
			`t.yaml:4:13: plans.free.costs.POST internal.example.com/jobs/{id}: "POST internal.example.com/jobs/{id}" never applies: every request it matches is exempt (exempt.routes[1] "internal.example.com/", line 5), and spends nothing`},
		// Hosts match in any case and without the root dot.
		{plan + "    costs: {\"GET API.example.com/x\": 2}\nexempt: [\"api.example.com./{rest...}\"]\n",
			`t.yaml:4:13: plans.free.costs.GET API.example.com/x: "GET API.example.com/x" never applies: every request it matches is exempt (exempt[0] "api.example.com./{rest...}", line 5), and spends nothing`},
	} {
		_, err := config.Parse("t.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\nerror %v\nwant %s", c.yaml, err, c.want)
		}
	}
	for _, y := range []string{
		// Respellings of the cost's route are charged: GET /healthz/,
		// GET /internal;v=1/status, get /healthz.
		plan + "    costs: {\"GET /healthz\": 0}\nexempt: [\"GET /healthz\"]\n",
		plan + "    costs: {\"GET /internal/status\": 2}\nexempt: {routes: [\"/internal/\"]}\n",
		plan + "    costs: {\"GET api.example.com/x\": 2}\nexempt: [\"GET api.example.com/\"]\n",
		// Some requests of the cost are not exempt.
		plan + "    costs: {\"/healthz\": 0}\nexempt: [\"GET /healthz\"]\n",
		plan + "    costs: {\"GET /internal/\": 2}\nexempt: [\"GET /internal/status\"]\n",
		// A wildcard of one segment matches paths whose decoded form the
		// exempt route does not (/items/a%2Fb), and those are charged.
		plan + "    costs: {\"GET /items/{id}\": 2}\nexempt: [\"GET /items/{id}\"]\n",
		plan + "    costs: {\"GET api.example.com/x\": 2}\nexempt: [\"GET other.example.com/x\"]\n",
	} {
		if _, err := config.Parse("t.yaml", []byte(y)); err != nil {
			t.Errorf("%s\n%v", y, err)
		}
	}
}
