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

const anyPlans = "plans:\n  free:\n    limits: [{name: m, algorithm: fixed-window, quantity: 100, window: 1m}]\n"

// A rule whose match is a list of alternatives counts the requests of
// every alternative together: 3 a minute across a.example/orders and
// b.example/billing, and nothing of a.example/billing.
func TestRuleMatchAlternativesShareOneCount(t *testing.T) {
	cfg, err := config.Parse("a.yaml", []byte(anyPlans+`rules:
  - name: api
    match:
      - {hosts: [a.example], paths: [/orders]}
      - {hosts: [b.example], paths: [/billing]}
    limits: [{name: m, algorithm: fixed-window, quantity: 3, window: 1m}]
`))
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	defer st.Close()
	mw, err := httplimit.New(sluice.NewLimiter(st), cfg.HTTPLimitOptions())
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	send := func(url string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", url, nil))
		return w.Code
	}
	var got []int
	for _, u := range []string{"http://a.example/orders", "http://a.example/orders", "http://b.example/billing",
		"http://b.example/billing", "http://a.example/orders", "http://a.example/billing"} {
		got = append(got, send(u))
	}
	if want := []int{200, 200, 200, 429, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("a/orders ×2, b/billing ×2, a/orders, a/billing: %v, want %v", got, want)
	}
}

// The one-mapping form and the list form read alike; plans: is the rule's,
// given once beside match: in either form.
func TestRuleMatchListReads(t *testing.T) {
	cfg, err := config.Parse("a.yaml", []byte(anyPlans+`rules:
  - name: api
    match:
      - {methods: [POST], hosts: [a.example], paths: ["/orders/"], except_paths: [/orders/health], headers: [{name: X-Beta}]}
      - {paths: [/billing]}
    plans: [free]
    limits: [{name: m, algorithm: fixed-window, quantity: 3, window: 1m}]
  - name: one
    match: {paths: [/x]}
    plans: [free]
    limits: [{name: m, algorithm: fixed-window, quantity: 3, window: 1m}]
`))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Rules[0]
	if len(r.Any) != 2 || len(r.Paths) != 0 || !slices.Equal(r.Plans, []string{"free"}) {
		t.Fatalf("rule: %+v", r)
	}
	a := r.Any[0]
	if !slices.Equal(a.Methods, []string{"POST"}) || !slices.Equal(a.Hosts, []string{"a.example"}) || !slices.Equal(a.Paths, []string{"/orders/"}) ||
		!slices.Equal(a.ExceptPaths, []string{"/orders/health"}) || len(a.Headers) != 1 || a.Headers[0].Name != "X-Beta" {
		t.Errorf("first alternative: %+v", a)
	}
	if one := cfg.Rules[1]; len(one.Any) != 0 || !slices.Equal(one.Paths, []string{"/x"}) || !slices.Equal(one.Plans, []string{"free"}) {
		t.Errorf("a mapping with plans beside it: %+v", one)
	}
}

func TestRuleMatchListErrorsPointAtTheLine(t *testing.T) {
	const lim = "    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]\n"
	for _, c := range []struct{ name, rules, want string }{
		{"an empty list", "  - name: r\n    match: []\n" + lim,
			`t.yaml:6:12: rules[0].match: an empty list of alternatives matches no request`},
		{"plans in an alternative", "  - name: r\n    match:\n      - {paths: [/a]}\n      - {paths: [/b], plans: [free]}\n" + lim,
			`t.yaml:8:30: rules[0].match[1].plans: plans: is the rule's, not an alternative's`},
		{"plans twice", "  - name: r\n    match: {paths: [/a], plans: [free]}\n    plans: [free]\n" + lim,
			`t.yaml:7:12: rules[0].plans: given twice, here and in match:`},
		{"a path of an alternative", "  - name: r\n    match:\n      - {paths: [/a]}\n      - {paths: [b]}\n" + lim,
			`t.yaml:8:18: rules[0].match[1].paths[0]: "b": a path pattern starts with "/"`},
		{"an except path of an alternative leaving out nothing", "  - name: r\n    match:\n      - {paths: [/a]}\n      - {paths: [/b/], except_paths: [/a/x]}\n" + lim,
			`t.yaml:8:39: rules[0].match[1].except_paths[0]: "/a/x" leaves out nothing`},
		{"a host of an alternative", "  - name: r\n    match:\n      - {paths: [/a]}\n      - {hosts: [\"b.example:80\"]}\n" + lim,
			`t.yaml:8:18: rules[0].match[1].hosts[0]: "b.example:80" never matches`},
		{"a wildcard one alternative lacks", "  - name: r\n    match:\n      - {paths: [\"/t/{tenant}\"]}\n      - {paths: [\"/u/{user}\"]}\n    key: [path:tenant]\n" + lim,
			`t.yaml:9:11: rules[0].key[0]: "path:tenant": path "/u/{user}" has no wildcard {tenant}`},
		{"an alternative that is not a mapping", "  - name: r\n    match: [/a]\n" + lim,
			`t.yaml:6:13: rules[0].match[0]: want a mapping`},
	} {
		_, err := config.Parse("t.yaml", []byte(anyPlans+"rules:\n"+c.rules))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// The cost check judges every alternative's routes: a limit below the
// cost of a route the second alternative matches is refused.
func TestRuleMatchListCostsOfEveryAlternative(t *testing.T) {
	const yaml = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 100, window: 1m}]\n" +
		"    costs: {\"POST /v1/bulk/{id}\": 10}\n" +
		"rules:\n  - name: bulk\n    match:\n      - {paths: [/v2/]}\n      - {hosts: [b.example], paths: [/v1/]}\n" +
		"    limits:\n      - {name: per-second, algorithm: fixed-window, quantity: 5, window: 1s}\n"
	_, err := config.Parse("r.yaml", []byte(yaml))
	want := `r.yaml:11:7: rules[0].limits: limit per-second holds 5, less than the 10 that "POST /v1/bulk/{id}" costs on plan free`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%v\nwant %s", err, want)
	}
}
