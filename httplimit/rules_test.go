package httplimit_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// clockedMiddleware returns the Middleware of o on a memory store, both on
// a fake clock at noon, logging nowhere unless o says where.
func clockedMiddleware(t testing.TB, o httplimit.Options) (*httplimit.Middleware, *fakeClock) {
	t.Helper()
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	o.Clock = clock.Now
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	return mw, clock
}

// rulesMiddleware returns a middleware limiting everyone by a plan of 10
// per minute (fixed window) and rules; 10.0.0.0/8 are trusted proxies.
func rulesMiddleware(t testing.TB, rules ...httplimit.Rule) (*httplimit.Middleware, *fakeClock) {
	t.Helper()
	return clockedMiddleware(t, httplimit.Options{
		Plans:          []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}}},
		Rules:          rules,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		UserHeader:     "X-User",
	})
}

func cost(c int64) *int64 { return &c }

// statuses sends each request and returns the statuses.
func statuses(mw *httplimit.Middleware, rs ...req) []int {
	h := mw.Handler(okHandler())
	var out []int
	for _, r := range rs {
		out = append(out, do(h, r).Code)
	}
	return out
}

func repeat(r req, n int) []req {
	out := make([]req, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func TestRuleKeyedByAHeaderGivesEachValueItsOwnQuota(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"header:X-Tenant"}, HeaderFrom: httplimit.HeaderFromAny,
		Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
	a := req{header: map[string]string{"X-Tenant": "acme"}}
	b := req{header: map[string]string{"X-Tenant": "globex"}}
	got := statuses(mw, a, a, a, b, b)
	if want := []int{200, 200, 429, 200, 200}; !slices.Equal(got, want) {
		t.Fatalf("acme ×3, globex ×2: %v, want %v", got, want)
	}
	w := do(mw.Handler(okHandler()), a)
	body := decodeProblem(t, w.Body.String())
	if len(body.ViolatedPolicies) != 1 || body.ViolatedPolicies[0] != "tenants.per-minute" {
		t.Errorf("violated-policies %v, want the rule's limit, tenants.per-minute", body.ViolatedPolicies)
	}
	if want := "Rate limit exceeded: 2 requests per minute under the tenants rule. Retry in 60 s."; body.Detail != want {
		t.Errorf("detail %q, want %q", body.Detail, want)
	}
}

func TestRuleOnARouteLeavesOtherRoutesAlone(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "uploads", Methods: []string{"POST"}, Paths: []string{"/v1/uploads"},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	up := req{method: "POST", path: "/v1/uploads"}
	got := statuses(mw, up, up, req{path: "/v1/search"}, req{path: "/v1/uploads"}, req{method: "POST", path: "//v1/./uploads"})
	if want := []int{200, 429, 200, 200, 429}; !slices.Equal(got, want) {
		t.Fatalf("POST uploads ×2, GET search, GET uploads, POST an unclean uploads path: %v, want %v", got, want)
	}
}

func TestARuleRefusalSpendsNothingOfThePlan(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "uploads", Paths: []string{"/v1/uploads"},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	h := mw.Handler(okHandler())
	do(h, req{path: "/v1/uploads"})
	w := do(h, req{path: "/v1/uploads"})
	if w.Code != 429 {
		t.Fatalf("second upload: %d", w.Code)
	}
	if got, want := w.Header().Get("RateLimit"), `"per-minute";r=9;t=60, "uploads.per-minute";r=0;t=60`; got != want {
		t.Errorf("RateLimit %q, want %q (the refused request spent nothing of the plan)", got, want)
	}
	if got, want := w.Header().Get("RateLimit-Policy"), `"per-minute";q=10;w=60, "uploads.per-minute";q=1;w=60`; got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	w = do(h, req{path: "/v1/search"})
	if got, want := w.Header().Get("RateLimit-Policy"), `"per-minute";q=10;w=60`; got != want {
		t.Errorf("a request no rule matches: RateLimit-Policy %q, want %q", got, want)
	}
}

func TestRuleKeyedByAPathWildcard(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "per-tenant", Paths: []string{"/t/{tenant}/", "/orgs/{tenant}"},
		Key: []string{"path:tenant"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got := statuses(mw, req{path: "/t/acme/x"}, req{path: "/orgs/acme"}, req{path: "/t/globex/y"}, req{path: "/other"})
	if want := []int{200, 429, 200, 200}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

func TestRuleHeaderFromAnUntrustedPeerFallsBack(t *testing.T) {
	limits := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
	t.Run("to the client address", func(t *testing.T) {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"header:X-Tenant"}, Limits: limits})
		forged := func(v string) req {
			return req{remote: "192.0.2.1:1234", header: map[string]string{"X-Tenant": v}}
		}
		proxied := func(v string) req {
			return req{remote: "10.0.0.1:1234", header: map[string]string{"X-Tenant": v, "X-Forwarded-For": "192.0.2.1"}}
		}
		// From an untrusted peer the header is not believed: every value is
		// the peer's address, one quota. Through the trusted proxy each
		// tenant has its own.
		got := statuses(mw, forged("a"), forged("b"), proxied("c"), proxied("d"), proxied("c"))
		if want := []int{200, 429, 200, 200, 429}; !slices.Equal(got, want) {
			t.Fatalf("%v, want %v", got, want)
		}
	})
	t.Run("by skipping the rule", func(t *testing.T) {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"header:X-Tenant"}, Fallback: httplimit.FallbackSkip, Limits: limits})
		untrusted := req{remote: "192.0.2.1:1234", header: map[string]string{"X-Tenant": "a"}}
		got := statuses(mw, untrusted, untrusted, untrusted)
		if want := []int{200, 200, 200}; !slices.Equal(got, want) {
			t.Fatalf("%v, want %v", got, want)
		}
	})
	t.Run("to one shared quota", func(t *testing.T) {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"header:X-Tenant"}, Fallback: httplimit.FallbackShared, Limits: limits})
		got := statuses(mw, req{remote: "192.0.2.1:1"}, req{remote: "192.0.2.2:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Fatalf("%v, want %v", got, want)
		}
	})
}

// TestRuleKeyRuleIsOneCountForEveryPattern: key rule counts the requests of
// every client on every pattern of the rule together; key route counts each
// pattern apart.
func TestRuleKeyRuleIsOneCountForEveryPattern(t *testing.T) {
	lim := []sluice.Limit{sluice.FixedWindow(2, time.Minute)}
	paths := []string{"/search", "/search/"}
	send := []req{{path: "/search", remote: "192.0.2.1:1"}, {path: "/search/x", remote: "192.0.2.2:1"}, {path: "/search", remote: "192.0.2.3:1"}}
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "all", Paths: paths, Key: []string{"rule"}, Limits: lim})
	if got, want := statuses(mw, send...), []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("key rule: %v, want %v", got, want)
	}
	mw, _ = rulesMiddleware(t, httplimit.Rule{Name: "each", Paths: paths, Key: []string{"route"}, Limits: lim})
	if got, want := statuses(mw, send...), []int{200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("key route: %v, want %v", got, want)
	}
}

// TestRuleExceptPathsLeaveRequestsOut: a rule for a subtree does not apply
// to the paths its ExceptPaths match, wildcards and subtrees included, and
// still applies to the rest.
func TestRuleExceptPathsLeaveRequestsOut(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/"},
		ExceptPaths: []string{"/api/health", "/api/admin/", "/api/items/{id}/status"}, Key: []string{"rule"},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	var rs []req
	for i, p := range []string{"/api/health", "/api/admin/x/y", "/api/items/7/status", "/api/health", "/api/items/7", "/api/search", "/api/healthz"} {
		rs = append(rs, req{path: p, remote: fmt.Sprintf("192.0.2.%d:1", i+1)})
	}
	if got, want := statuses(mw, rs...), []int{200, 200, 200, 200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

// TestRuleKeysQueryCookieAndPath: a query parameter (decoded, so that
// another spelling of one value is the same count), a cookie and the whole
// path (cleaned, a trailing slash no other path) each name a count; a
// request without the value falls back.
func TestRuleKeysQueryCookieAndPath(t *testing.T) {
	lim := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
	for _, c := range []struct {
		key  string
		reqs []req
		want []int
	}{
		{"query:tenant", []req{{path: "/s?tenant=acme"}, {path: "/s?page=2&tenant=%61cme"}, {path: "/s?tenant=other"}, {path: "/s?x=1"}, {path: "/s"}},
			[]int{200, 429, 200, 200, 200}},
		{"cookie:session", []req{{header: map[string]string{"Cookie": "a=1; session=s1"}}, {header: map[string]string{"Cookie": "session=s1"}},
			{header: map[string]string{"Cookie": "session=s2"}}, {}, {}}, []int{200, 429, 200, 200, 200}},
		{"path", []req{{path: "/a/1"}, {path: "/a/1"}, {path: "/a//1/"}, {path: "/a/2"}}, []int{200, 429, 429, 200}},
	} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "r", Key: []string{c.key}, Fallback: httplimit.FallbackSkip, Limits: lim})
		for i := range c.reqs {
			c.reqs[i].remote = fmt.Sprintf("192.0.2.%d:1", i+1) // every request its own client
		}
		if got := statuses(mw, c.reqs...); !slices.Equal(got, c.want) {
			t.Errorf("key %s: %v, want %v", c.key, got, c.want)
		}
	}
}

func TestRuleMatchesHostsMethodsAndHeaders(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "beta", Hosts: []string{"*.example.com"}, Methods: []string{"GET"},
		Headers: []httplimit.HeaderMatch{{Name: "X-Beta", Value: "1"}, {Name: "X-Trace"}}, Key: []string{"route", "host"},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	h := mw.Handler(okHandler())
	send := func(host, method string, header map[string]string) int {
		hr := httptest.NewRequest(method, "/api/search", nil)
		hr.Host = host
		for k, v := range header {
			hr.Header[k] = []string{v}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hr)
		return w.Code
	}
	beta := map[string]string{"X-Beta": "1", "X-Trace": ""}
	if c := send("api.example.com", "GET", beta); c != 200 {
		t.Fatalf("first: %d", c)
	}
	for _, c := range []struct {
		what   string
		host   string
		method string
		header map[string]string
		want   int
	}{
		{"same host, in another case, and port", "API.example.com:8443", "HEAD", beta, 429},
		{"another host under the domain", "eu.example.com", "GET", beta, 200},
		{"the domain itself", "example.com", "GET", beta, 200},
		{"another method", "api.example.com", "POST", beta, 200},
		{"header of another value", "api.example.com", "GET", map[string]string{"X-Beta": "2", "X-Trace": ""}, 200},
		{"a header missing", "api.example.com", "GET", map[string]string{"X-Beta": "1"}, 200},
	} {
		if got := send(c.host, c.method, c.header); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
}

func TestRulesValidate(t *testing.T) {
	plan := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(50)}, Costs: map[string]int64{"POST /big": 10}}}
	lim := []sluice.Limit{sluice.FixedWindow(20, time.Minute)}
	for _, c := range []struct {
		name string
		rule httplimit.Rule
		want string
	}{
		{"a rule without a name", httplimit.Rule{Limits: lim}, `Options.Rules[0].Name: rule name "" must be`},
		{"a rule without limits", httplimit.Rule{Name: "r"}, "Options.Rules[0].Limits: a rule needs at least one limit"},
		{"a path that is not a pattern", httplimit.Rule{Name: "r", Paths: []string{"/a/{x}y"}, Limits: lim}, `Options.Rules[0].Paths[0]: "/a/{x}y": segment "{x}y": a wildcard is a whole segment`},
		{"an except path that is not a pattern", httplimit.Rule{Name: "r", Paths: []string{"/a/"}, ExceptPaths: []string{"a/b"}, Limits: lim}, `Options.Rules[0].ExceptPaths[0]: "a/b": a path pattern starts with "/"`},
		{"a path with a method", httplimit.Rule{Name: "r", Paths: []string{"GET /a"}, Limits: lim}, `starts with "/"`},
		{"an unknown key", httplimit.Rule{Name: "r", Key: []string{"cookie"}, Limits: lim}, `Options.Rules[0].Key[0]: "cookie" is not a key attribute`},
		{"a query key without a name", httplimit.Rule{Name: "r", Key: []string{"query:"}, Limits: lim}, `Options.Rules[0].Key[0]: "query:": "" is not a query name`},
		{"a wildcard that a path lacks", httplimit.Rule{Name: "r", Paths: []string{"/t/{id}", "/u"}, Key: []string{"path:id"}, Limits: lim}, `path "/u" has no wildcard {id}`},
		{"a trusted header without trusted proxies", httplimit.Rule{Name: "r", Key: []string{"header:X-T"}, Limits: lim}, "none are configured"},
		{"an unknown fallback", httplimit.Rule{Name: "r", Fallback: "deny", Limits: lim}, `Options.Rules[0].Fallback: "deny" is not one of ip, shared, skip`},
		{"a cost no limit holds", httplimit.Rule{Name: "r", Cost: cost(30), Limits: lim}, "Options.Rules[0].Cost: 30, more than limit per-minute can ever hold (20)"},
		{"a qualified name too long", httplimit.Rule{Name: strings.Repeat("r", 60), Limits: lim}, "longer than 64 characters"},
		{"a host of only the root dot", httplimit.Rule{Name: "r", Hosts: []string{"."}, Limits: lim}, `Options.Rules[0].Hosts[0]: "." is not a host name or *.domain`},
		{"a host with an empty label", httplimit.Rule{Name: "r", Hosts: []string{"api..example.com"}, Limits: lim}, `Options.Rules[0].Hosts[0]: "api..example.com" is not a host name or *.domain`},
		{"a wildcard host of only the root dot", httplimit.Rule{Name: "r", Hosts: []string{"*.."}, Limits: lim}, `Options.Rules[0].Hosts[0]: "*.." is not a host name or *.domain`},
		{"a wildcard key written with its braces", httplimit.Rule{Name: "r", Paths: []string{"/t/{id}"}, Key: []string{"path:{id}"}, Limits: lim},
			`Options.Rules[0].Key[0]: "path:{id}": a wildcard is named without its braces (write "path:id")`},
		{"a path with a glob", httplimit.Rule{Name: "r", Paths: []string{"/v1/x/*"}, Limits: lim},
			`Options.Rules[0].Paths[0]: "/v1/x/*": segment "*" is no wildcard: ServeMux matches it as it is written, so it matches only the path with that segment (the subtree is "/v1/x/", one segment {name}, the rest {name...})`},
		{"an except path with a glob", httplimit.Rule{Name: "r", ExceptPaths: []string{"/*/health"}, Limits: lim},
			`Options.Rules[0].ExceptPaths[0]: "/*/health": segment "*" is no wildcard: ServeMux matches it as it is written, so it matches only the path with that segment (the subtree is "/", one segment {name}, the rest {name...})`},
		{"a host with a port", httplimit.Rule{Name: "r", Hosts: []string{"API.example.com:8443"}, Limits: lim},
			`Options.Rules[0].Hosts[0]: "API.example.com:8443" never matches: a request's host is matched without its port (write "API.example.com")`},
	} {
		err := httplimit.Options{Plans: plan, Rules: []httplimit.Rule{c.rule}}.Validate()
		var fe *httplimit.FieldError
		if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := (httplimit.Options{Plans: plan, Rules: []httplimit.Rule{{Name: "ok", Paths: []string{"/t/{id}"}, Key: []string{"path:id", "ip/24/48", "client"}, Cost: cost(1), Limits: lim}}}).Validate(); err != nil {
		t.Errorf("a valid rule: %v", err)
	}
}

func TestGlobalRefusalsMay503AndBodiesFollowTheTemplate(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:           []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		Global:          []sluice.Limit{sluice.FixedWindow(2, time.Minute).Named("all")},
		GlobalStatus:    503,
		RefusalTemplate: `{"code": "SLOW_DOWN", "wait": "{{retryAfter}}", "why": "{{violated-policies}}", "s": "{{status}}"}`,
	})
	h := mw.Handler(okHandler())
	a, b, c := req{remote: "192.0.2.1:1"}, req{remote: "192.0.2.2:1"}, req{remote: "192.0.2.3:1"}
	do(h, a)
	w := do(h, a) // the client's own limit: 429
	if w.Code != 429 || w.Body.String() != `{"code":"SLOW_DOWN","wait":60,"why":["per-minute"],"s":429}`+"\n" ||
		w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Retry-After") != "60" {
		t.Errorf("the client's limit: %d %q %v", w.Code, w.Body.String(), w.Header())
	}
	do(h, b)
	w = do(h, c) // only the global limit: 503
	if w.Code != 503 || w.Body.String() != `{"code":"SLOW_DOWN","wait":60,"why":["all"],"s":503}`+"\n" {
		t.Errorf("the global limit: %d %q", w.Code, w.Body.String())
	}
}

// TestRulesApplyToDecideClient: the decision API's requests (a method and
// a path) meet the rules of their route; keys it cannot read (headers)
// fall back as configured.
func TestRulesApplyToDecideClient(t *testing.T) {
	mw, _ := rulesMiddleware(t,
		httplimit.Rule{Name: "uploads", Paths: []string{"/v1/uploads"}, Key: []string{"route"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}},
		httplimit.Rule{Name: "tenants", Key: []string{"header:X-Tenant"}, Fallback: httplimit.FallbackSkip, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	ctx := t.Context()
	var got []string
	for _, who := range []httplimit.Requester{{User: "a"}, {User: "b"}} {
		res, err := mw.DecideFor(ctx, who, "POST", "/v1/uploads", -1)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join(res.Rules(), ",")+":"+strings.Join(res.Decision.Violated, ","))
		mw.Discard(res)
	}
	if want := []string{"uploads:", "uploads:uploads.per-minute"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q (the route is shared, the header rule skipped)", got, want)
	}
}
