package server_test

import (
	"strings"
	"testing"
)

// url.ParseQuery returns no parameter at all for a query of more than
// 10,000 "&"-separated parts (Go's urlmaxqueryparams), while PHP
// (php_default_treat_data splits with strtok, which skips empty parts, so
// max_input_vars counts no "&&"), and so Laravel behind Caddy's
// php_fastcgi or FrankenPHP, reads _method=DELETE. The proxy and
// forward-auth read the _method of a query however many pairs it has
// (docs/rules.md, "Method overrides"): a POST so padded is the DELETE, at
// its cost of 5.
func TestAPaddedQueryHidesNoMethodOverride(t *testing.T) {
	f := newFixture(t, checkOverrideConfig)
	target := "/api/items/x?_method=DELETE" + strings.Repeat("&", 10000)
	for _, c := range []struct {
		surface string
		method  string
		path    string
		header  map[string]string
	}{
		{"proxy", "POST", target, map[string]string{"X-Forwarded-For": "198.51.100.7"}},
		{"forward-auth", "GET", "/v1/forward-auth", map[string]string{"X-Forwarded-For": "198.51.100.8", "X-Forwarded-Method": "POST", "X-Forwarded-Uri": target}},
	} {
		r := f.do(t, c.method, c.path, "", c.header)
		readAll(t, r)
		if m := rateLimitRemaining.FindStringSubmatch(r.Header.Get("RateLimit")); r.StatusCode != 200 || m == nil || m[1] != "95" {
			t.Errorf("%s, POST /api/items/x?_method=DELETE and 10,000 \"&\": %d, RateLimit %q; want 200 and remaining 95 (the DELETE's cost)",
				c.surface, r.StatusCode, r.Header.Get("RateLimit"))
		}
	}
}

// A _method pair that url.ParseQuery refuses is one PHP reads anyway (it
// keeps an escape that does not decode as it is, and a ";" as part of the
// value): which method Laravel then serves, of it or of another _method
// beside it, sluice cannot tell. Every surface refuses such a POST with a
// 400, nothing spent, as it refuses overrides that name different methods.
func TestAMethodOverridePairThatDoesNotParseIsRefused(t *testing.T) {
	for i, uri := range []string{"/api/items/x?_method=%zz&_method=DELETE", "/api/items/x?_method=DELETE;x"} {
		got := judgeOverrideOn(t, newFixture(t, checkOverrideConfig), overrideCase{name: uri, uri: uri}, i+1)
		for j, surface := range []string{"proxy", "forward-auth", "/v1/check"} {
			if g := got[j]; g.status != 400 || g.remaining != "99" {
				t.Errorf("%s, POST %s: %d, remaining %s; want a 400 spending nothing (remaining 99)", surface, uri, g.status, g.remaining)
			}
		}
	}
}
