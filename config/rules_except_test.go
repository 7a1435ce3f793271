package config_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A rule's except: leaves out /health on b.example and OPTIONS on every
// host: 2 a minute of a.example/health, every b.example/health and
// preflight admitted.
func TestRuleExceptReads(t *testing.T) {
	cfg, err := config.Parse("a.yaml", []byte(anyPlans+`rules:
  - name: api
    match: {paths: [/]}
    except:
      - {hosts: [b.example], paths: [/health]}
      - {methods: [OPTIONS]}
      - {headers: [{name: X-Probe, value: "1"}]}
    limits: [{name: m, algorithm: fixed-window, quantity: 2, window: 1m}]
`))
	if err != nil {
		t.Fatal(err)
	}
	ex := cfg.Rules[0].Except
	if len(ex) != 3 || !slices.Equal(ex[0].Hosts, []string{"b.example"}) || !slices.Equal(ex[0].Paths, []string{"/health"}) ||
		!slices.Equal(ex[1].Methods, []string{"OPTIONS"}) || len(ex[2].Headers) != 1 || ex[2].Headers[0] != (httplimit.HeaderMatch{Name: "X-Probe", Value: "1"}) {
		t.Fatalf("except: %+v", ex)
	}
	st := memory.New()
	defer st.Close()
	mw, err := httplimit.New(sluice.NewLimiter(st), cfg.HTTPLimitOptions())
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	send := func(method, url string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, url, nil))
		return w.Code
	}
	var got []int
	for _, u := range []string{"http://b.example/health", "http://b.example/health", "http://b.example/health", "http://a.example/health", "http://a.example/health", "http://a.example/health"} {
		got = append(got, send("GET", u))
	}
	got = append(got, send("OPTIONS", "http://a.example/x"))
	if want := []int{200, 200, 200, 200, 200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("b.example/health ×3, a.example/health ×3, OPTIONS a.example/x: %v, want %v", got, want)
	}
}

func TestRuleExceptErrorsPointAtTheLine(t *testing.T) {
	const lim = "    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]\n"
	for _, c := range []struct{ name, rules, want string }{
		{"an entry naming nothing", "  - name: r\n    except:\n      - {}\n" + lim,
			`t.yaml:7:9: rules[0].except[0]: an entry of Except that names no method, path, host or header would leave out every request`},
		{"except_paths in an entry", "  - name: r\n    except:\n      - {paths: [/a/], except_paths: [/a/b]}\n" + lim,
			`t.yaml:7:38: rules[0].except[0].except_paths: an except entry has no except_paths of its own`},
		{"plans in an entry", "  - name: r\n    except:\n      - {paths: [/a/], plans: [free]}\n" + lim,
			`t.yaml:7:31: rules[0].except[0].plans: plans: is the rule's, not an except entry's`},
		{"an unknown key", "  - name: r\n    except:\n      - {paths: [/a/], host: [a.example]}\n" + lim,
			`t.yaml:7:24: rules[0].except[0].host`},
		{"a bad path", "  - name: r\n    except:\n      - {methods: [GET]}\n      - {paths: [a]}\n" + lim,
			`t.yaml:8:18: rules[0].except[1].paths[0]: "a": a path pattern starts with "/"`},
		{"a host with a port", "  - name: r\n    except:\n      - {hosts: [\"b.example:80\"]}\n" + lim,
			`t.yaml:7:18: rules[0].except[0].hosts[0]: "b.example:80" never matches`},
		{"a host outside the rule's", "  - name: r\n    match: {hosts: [a.example, \"*.c.example\"]}\n    except:\n      - {hosts: [b.example], paths: [/x]}\n" + lim,
			`t.yaml:8:9: rules[0].except[0]: leaves out nothing: none of its hosts (b.example) is one of the rule's (a.example, *.c.example)`},
		{"paths outside the rule's", "  - name: r\n    match: {paths: [/api/]}\n    except:\n      - {paths: [/health, /v2/]}\n" + lim,
			`t.yaml:8:9: rules[0].except[0]: leaves out nothing: none of the rule's paths (/api/) matches a path its own (/health, /v2/) match`},
		{"methods outside the rule's", "  - name: r\n    match: {methods: [POST]}\n    except:\n      - {methods: [OPTIONS]}\n" + lim,
			`t.yaml:8:9: rules[0].except[0]: leaves out nothing: none of its methods (OPTIONS) is one of the rule's (POST)`},
		{"outside every alternative", "  - name: r\n    match:\n      - {hosts: [a.example]}\n      - {paths: [/b/]}\n    except:\n      - {hosts: [c.example], paths: [/c/]}\n" + lim,
			`t.yaml:10:9: rules[0].except[0]: leaves out nothing: no alternative of the rule matches what it matches`},
		{"not a list", "  - name: r\n    except: {paths: [/a]}\n" + lim,
			`t.yaml:6:13: rules[0].except`},
	} {
		_, err := config.Parse("t.yaml", []byte(anyPlans+"rules:\n"+c.rules))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// An entry that meets one alternative, or a wildcard host the rule's, or
// a subtree of the rule's paths, is taken.
func TestRuleExceptThatMeetsTheRuleIsTaken(t *testing.T) {
	const lim = "    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]\n"
	for _, rules := range []string{
		"  - name: r\n    match: {hosts: [\"*.example\"]}\n    except:\n      - {hosts: [b.example]}\n" + lim,
		"  - name: r\n    match: {hosts: [B.Example.]}\n    except:\n      - {hosts: [b.example]}\n" + lim,
		"  - name: r\n    match: {paths: [/api/]}\n    except:\n      - {paths: [/api/health, /other]}\n" + lim,
		"  - name: r\n    match: {methods: [GET]}\n    except:\n      - {methods: [HEAD]}\n" + lim,
		"  - name: r\n    match:\n      - {hosts: [a.example]}\n      - {paths: [/b/]}\n    except:\n      - {hosts: [c.example], paths: [/b/x]}\n" + lim,
	} {
		if _, err := config.Parse("t.yaml", []byte(anyPlans+"rules:\n"+rules)); err != nil {
			t.Errorf("%s: %v", rules, err)
		}
	}
}

// The cost check leaves alone a route that the rule's except: leaves out,
// and still judges one it leaves out only with a header.
func TestRuleExceptLeavesOutARouteOfCost(t *testing.T) {
	const plans = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 100, window: 1m}]\n" +
		"    costs: {\"POST /v1/bulk/{id}\": 10}\n"
	rule := func(except string) string {
		return plans + "rules:\n  - name: bulk\n    match: {paths: [\"/v1/\"]}\n    except: [" + except + "]\n" +
			"    limits:\n      - {name: per-second, algorithm: fixed-window, quantity: 5, window: 1s}\n"
	}
	if _, err := config.Parse("r.yaml", []byte(rule("{paths: [\"/v1/bulk/\"]}"))); err != nil {
		t.Errorf("the route left out: %v", err)
	}
	if _, err := config.Parse("r.yaml", []byte(rule("{methods: [POST], paths: [\"/v1/bulk/\"], headers: [{name: X-Bulk}]}"))); err == nil {
		t.Errorf("the route left out only with X-Bulk: loaded")
	}
	if _, err := config.Parse("r.yaml", []byte(rule("{methods: [GET]}"))); err == nil {
		t.Errorf("GET left out, the route being POST: loaded")
	}
}
