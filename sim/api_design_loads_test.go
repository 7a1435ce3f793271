package sim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// designText reads the API requirements text and designs it, as sluice
// design does, returning the first refusal.
func designText(text string) (*APIAnalysis, error) {
	req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
	if err != nil {
		return nil, err
	}
	req.MaxArrivals = 2000
	return DesignAPI(context.Background(), req)
}

// designLoadsOrIsRefused designs the API requirements text and fails
// unless the design is refused naming one of fields, or the configuration
// it writes loads as sluice check loads it (docs/designer.md: the design
// is "followed by a complete configuration").
func designLoadsOrIsRefused(t *testing.T, text string, fields ...string) {
	t.Helper()
	a, err := designText(text)
	if err == nil {
		if _, err := config.Parse("design.yaml", []byte(a.Config)); err != nil {
			t.Errorf("designed, but sluice check refuses the configuration written: %v", err)
		}
		return
	}
	for _, f := range fields {
		if strings.Contains(err.Error(), f) {
			return
		}
	}
	t.Errorf("refused with %v, want one of %q named", err, fields)
}

// designIsRefused designs the API requirements text and fails unless it
// is refused naming field; why says what a design would get wrong.
func designIsRefused(t *testing.T, text, field, why string) {
	t.Helper()
	a, err := designText(text)
	if err == nil {
		t.Fatalf("designed, though %s:\n%s", why, a.Config)
	}
	if !strings.Contains(err.Error(), field) {
		t.Errorf("%v: want %s named", err, field)
	}
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
// two routes it cannot hold together, such as one route costed twice with
// its wildcard named otherwise, or two neither more specific, are refused
// naming the second endpoint; one route exempted twice is written once
// (TestDesignAPIWritesARouteExemptedTwiceOnce).
func TestDesignAPIRefusesRoutesAListCannotHoldTogether(t *testing.T) {
	for field, endpoints := range map[string]string{
		"endpoints[1].cost":   `[{route: "POST /x/{a}", cost: 2}, {route: "POST /x/{b}", cost: 3}]`,
		"endpoints[1].exempt": `[{route: "POST /x/{a}/b", exempt: true}, {route: "POST /x/a/{b}", exempt: true}]`,
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
			designIsRefused(t, text, "endpoints[0]", name+" on an exempt route is never applied")
		})
	}
}

// A route's limit is written as a rule's match.paths, which config reads
// as httplimit's path patterns (routes.CheckPath): a route ServeMux takes
// but a rule does not, with a literal segment holding "}" or more than 8
// wildcards, is refused naming the route when it has a limit.
func TestDesignAPIRefusesALimitOnARouteARuleCannotMatch(t *testing.T) {
	for _, route := range []string{
		"GET /a}b",
		"GET /{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}",
	} {
		t.Run(route, func(t *testing.T) {
			text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\nendpoints: [{route: \"" + route + "\", limit: 5/1h}]\n"
			designLoadsOrIsRefused(t, text, "endpoints[0].route")
		})
	}
}

// A route is in one class however it is written: config tells one route
// by the requests it matches ("POST /x/{b}" is "POST /x/{a}" with its
// wildcard renamed, "POST /a%62" is "POST /ab", as ServeMux unescapes a
// literal), so the second class is refused, naming it.
func TestDesignAPIRefusesARouteInTwoClassesHoweverItIsWritten(t *testing.T) {
	for _, pair := range [][2]string{
		{"POST /x/{a}", "POST /x/{b}"},
		{"POST /ab", "POST /a%62"},
	} {
		t.Run(pair[1], func(t *testing.T) {
			text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\n" +
				"endpoints: [{route: \"" + pair[0] + "\", class: expensive}, {route: \"" + pair[1] + "\", class: critical}]\n" +
				"overload: {in_flight: 500}\n"
			designLoadsOrIsRefused(t, text, "endpoints[1].class")
		})
	}
}

// An exemption covers every request its route matches, however another
// endpoint writes that route (a wildcard renamed, a literal escaped): a
// limit or cost there would be written and never applied, so it is
// refused, naming that endpoint, as one on the route written alike is
// (TestDesignAPIRefusesALimitOnARouteAnotherEndpointExempts).
func TestDesignAPIRefusesALimitOnARouteExemptedWrittenOtherwise(t *testing.T) {
	for _, c := range []struct{ exempt, limited, field, request string }{
		{"GET /x/{a}", "GET /x/{b}", "limit: 5/1h", "/x/1"},
		{"GET /x/{a}", "GET /x/{b}", "cost: 10", "/x/1"},
		{"GET /ab", "GET /a%62", "limit: 5/1h", "/ab"},
	} {
		t.Run(c.limited+" "+c.field, func(t *testing.T) {
			// ServeMux matches the request by either route.
			for _, p := range []string{c.exempt, c.limited} {
				mux := http.NewServeMux()
				mux.HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
				if _, pat := mux.Handler(httptest.NewRequest("GET", c.request, nil)); pat != p {
					t.Fatalf("%s does not match GET %s", p, c.request)
				}
			}
			text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\nendpoints: [{route: \"" + c.exempt + "\", exempt: true}, " +
				"{route: \"" + c.limited + "\", " + c.field + "}]\n"
			designIsRefused(t, text, "endpoints[1]", c.field+" on "+c.limited+", which "+c.exempt+" exempts, is never applied")
		})
	}
}

// A rule's limit is named "<rule>.<limit>", and config refuses one that
// is already the name of a plan's limit, which may be named with a dot:
// the rule's name gives way, as it does to another rule's, and the
// configuration loads.
func TestDesignAPINamesARuleSoItsLimitIsNoPlanLimit(t *testing.T) {
	text := "plans: [{name: free, limits: [{rate: 50/1s}, {rate: 9/1h, name: get-x.per-hour}]}]\n" +
		"endpoints: [{route: \"GET /x\", limit: 5/1h}]\n"
	designLoadsOrIsRefused(t, text)
}

// A design too big for one instance's memory is designed again on Redis:
// its rules are designed afresh, each written once, and the configuration
// loads.
func TestDesignAPIRedesignedOnRedisWritesEachRuleOnce(t *testing.T) {
	text := "plans: [{name: free, clients: 1000000000, limits: [{rate: 5000/1h}]}]\nendpoints: [{route: \"GET /x\", limit: 5/1h}]\n"
	designLoadsOrIsRefused(t, text)
	if a := designAPI(t, text); a.Store != "redis" || len(a.Rules) != 1 {
		t.Errorf("designed on %s with %d rules, want redis and 1", a.Store, len(a.Rules))
	}
}
