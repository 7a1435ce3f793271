package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// designLoadsOrIsRefused designs the API requirements text and fails
// unless the design is refused naming one of fields, or the configuration
// it writes loads as sluice check loads it (docs/designer.md: the design
// is "followed by a complete configuration").
func designLoadsOrIsRefused(t *testing.T, text string, fields ...string) {
	t.Helper()
	req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
	if err == nil {
		req.MaxArrivals = 2000
		var a *APIAnalysis
		if a, err = DesignAPI(context.Background(), req); err == nil {
			if _, err := config.Parse("design.yaml", []byte(a.Config)); err != nil {
				t.Errorf("designed, but sluice check refuses the configuration written: %v", err)
			}
			return
		}
	}
	for _, f := range fields {
		if strings.Contains(err.Error(), f) {
			return
		}
	}
	t.Errorf("refused with %v, want one of %q named", err, fields)
}

// An endpoint's route is "a ServeMux pattern" (APIEndpoint's doc): one
// net/http refuses as a pattern, or whose path config refuses (a glob, a
// space), is refused naming the route, wherever the configuration would
// write it (a rule, a cost, a class).
func TestDesignAPIRefusesARouteThatIsNoServeMuxPattern(t *testing.T) {
	for _, tc := range []struct{ route, field string }{
		{"GET /x/{id", "limit: 5/1h"},        // an unclosed wildcard
		{"GET /x/{id}/{id}", "limit: 5/1h"},  // a wildcard twice
		{"GET /x/{rest...}/b", "cost: 2"},    // {...} not at the end
		{"GE(T /x", "cost: 2"},               // no method token
		{"GET /x/{a-b}", "class: expensive"}, // a wildcard that is no Go identifier
		{"GET /x/*", "exempt: true"},         // a glob, which ServeMux reads as "*"
		{"GET /x y", "limit: 5/1h"},          // a space in the path
	} {
		t.Run(tc.route, func(t *testing.T) {
			text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\nendpoints: [{route: \"" + tc.route + "\", " + tc.field + "}]\noverload: {in_flight: 500}\n"
			designLoadsOrIsRefused(t, text, "endpoints[0].route")
		})
	}
}

// A route is in one degradation class: two endpoints of one route in two
// classes are refused, naming the second; in one class, the route is
// written once.
func TestDesignAPIRefusesARouteInTwoClasses(t *testing.T) {
	for _, second := range []string{"critical", "expensive"} {
		text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\n" +
			"endpoints: [{route: \"POST /x\", class: expensive}, {route: \"POST /x\", class: " + second + "}]\n" +
			"overload: {in_flight: 500}\n"
		designLoadsOrIsRefused(t, text, "endpoints[1].class")
	}
}

// The costs, the exempt routes and each class are held by one ServeMux:
// two routes it cannot hold together, such as one route with its wildcard
// named otherwise, are refused naming the second endpoint; one route
// exempted twice is written once.
func TestDesignAPIRefusesRoutesAListCannotHoldTogether(t *testing.T) {
	for field, endpoints := range map[string]string{
		"endpoints[1].cost":   `[{route: "POST /x/{a}", cost: 2}, {route: "POST /x/{b}", cost: 3}]`,
		"endpoints[1].exempt": `[{route: "POST /x/{a}", exempt: true}, {route: "POST /x/{b}", exempt: true}]`,
		"endpoints[1].class":  `[{route: "POST /x/{a}/b", class: health}, {route: "POST /x/a/{b}", class: health}]`,
		"":                    `[{route: "POST /x", exempt: true}, {route: "POST /x", exempt: true}]`,
	} {
		text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\nendpoints: " + endpoints + "\noverload: {in_flight: 500}\n"
		req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
		if err != nil {
			t.Fatal(err)
		}
		req.MaxArrivals = 2000
		a, err := DesignAPI(context.Background(), req)
		switch {
		case field == "" && err != nil:
			t.Errorf("%s: %v", endpoints, err)
		case field == "":
			if _, err := config.Parse("design.yaml", []byte(a.Config)); err != nil {
				t.Errorf("%s: sluice check refuses the configuration written: %v", endpoints, err)
			}
		case err == nil:
			t.Errorf("%s: designed:\n%s", endpoints, a.Config)
		case !strings.Contains(err.Error(), field):
			t.Errorf("%s: %v, want %s named", endpoints, err, field)
		}
	}
}

// A plan's own limit on a route becomes a rule named after the route and
// the plan; its limit is "<rule>.<limit>", which config bounds at 64
// characters. With a long plan name, the route's part of the name gives
// way, and the configuration loads.
func TestDesignAPIKeepsAPlanRuleNameWithinBounds(t *testing.T) {
	plan := "enterprise-annual-contract-tier" // 31 characters
	text := "plans: [{name: " + plan + ", limits: [{rate: 50/1s}]}]\n" +
		"endpoints: [{route: \"GET /api/v1/reports/quarterly/export\", limits: {" + plan + ": 5/1h}}, " +
		"{route: \"GET /api/v1/reports/quarterly/export\", limits: {" + plan + ": 50/1d}}]\n"
	designLoadsOrIsRefused(t, text)
	a := designAPI(t, text)
	for _, r := range a.Rules {
		if !strings.HasSuffix(strings.TrimSuffix(r.Name, "-2"), plan) || !strings.HasPrefix(r.Name, "get-api") {
			t.Errorf("rule %q: want the route's start and the plan's name", r.Name)
		}
	}
}

// An internal caller's plan is named "internal-<name>", within the 64
// characters config allows a plan's name: a longer caller's name is
// refused, naming it.
func TestDesignAPIRefusesAnInternalCallerWhosePlanNameIsTooLong(t *testing.T) {
	name := "nightly-billing-reconciliation-batch-job-eu-west-1-primary" // 58 characters
	text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\ninternal: [{name: " + name + ", rate: 50/1s}]\n"
	designLoadsOrIsRefused(t, text, "internal[0].name")
}

// A trusted proxy written with bits past its length (10.0.0.1/8) is
// refused, as config refuses it: one address, or its network?
func TestDesignAPIRefusesATrustedProxyWithHostBits(t *testing.T) {
	text := "identity: {user_header: X-User-ID, trusted_proxies: [10.0.0.1/8]}\nplans: [{name: free, limits: [{rate: 50/1s}]}]\n"
	designLoadsOrIsRefused(t, text, "identity.trusted_proxies[0]")
}

// The user header is refused, as config refuses it, when it is no header
// name, or names Host, which is never among a request's headers.
func TestDesignAPIRefusesAUserHeaderThatIsNoHeaderName(t *testing.T) {
	for _, h := range []string{"X User", "X-User:", "X-Üser", "Host"} {
		t.Run(h, func(t *testing.T) {
			text := "identity: {user_header: \"" + h + "\"}\nplans: [{name: free, limits: [{rate: 50/1s}]}]\n"
			designLoadsOrIsRefused(t, text, "identity.user_header")
		})
	}
}

// An exempt route is never limited (docs/rules.md: "Exempt requests are
// never limited, never counted"): a limit or cost stated on a second
// endpoint of a route one exempts would be written and never applied, so
// it is refused, naming that endpoint, as one on the exempt endpoint is
// (TestDesignAPIRefusesALimitOnAnExemptRoute).
func TestDesignAPIRefusesALimitOnARouteAnotherEndpointExempts(t *testing.T) {
	for name, endpoint := range map[string]string{
		"a limit": `{route: "GET /x", limit: 5/1h}`,
		"a cost":  `{route: "GET /x", cost: 10}`,
	} {
		t.Run(name, func(t *testing.T) {
			text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\nendpoints: [" + endpoint + ", {route: \"GET /x\", exempt: true}]\n"
			req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
			if err != nil {
				t.Fatal(err)
			}
			req.MaxArrivals = 2000
			a, err := DesignAPI(context.Background(), req)
			if err == nil {
				t.Fatalf("designed %s on an exempt route, which the configuration never applies:\n%s", name, a.Config)
			}
			if !strings.Contains(err.Error(), "endpoints[0]") {
				t.Errorf("%v: want endpoints[0] named", err)
			}
		})
	}
}
