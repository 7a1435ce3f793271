package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// PHP names a query parameter with its leading spaces dropped and its
// other spaces and dots as underscores (php_register_variable_ex; "Dots
// and spaces in variable names are converted to underscores" in the PHP
// manual), so ?.method=DELETE, ?%2Emethod=DELETE, ?%20_method=DELETE and
// ?+_method=DELETE are all $_GET['_method'], which Symfony and Laravel
// read for a POST and serve as a DELETE. Forward-auth judges each as the
// DELETE it names, as it judges ?_method=DELETE: charged 3, not the 1 of
// a POST.
func TestForwardAuthJudgesAPHPSpellingOfMethodParam(t *testing.T) {
	f := newFixture(t, overrideConfig)
	for i, uri := range []string{"/api/items/1?.method=DELETE", "/api/items/1?%2Emethod=DELETE", "/api/items/1?%20_method=DELETE",
		"/api/items/1?+_method=DELETE"} {
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "POST", "X-Forwarded-Uri": uri,
			"X-Forwarded-For": "198.51.100." + string(rune('1'+i))})
		body := readAll(t, r)
		if rl := r.Header.Get("RateLimit"); r.StatusCode != http.StatusOK || !strings.HasPrefix(rl, remaining("0")) {
			t.Errorf("POST %s (PHP's $_GET['_method'] = DELETE): %d, RateLimit %q %s; want 200 with r=0, charged as the DELETE (3 units)",
				uri, r.StatusCode, rl, body)
		}
	}
}

// The reverse proxy reads the query's _method by the same names: a POST
// with ?.method=DELETE is charged as the DELETE a PHP upstream serves.
func TestProxyJudgesAPHPSpellingOfMethodParam(t *testing.T) {
	f := newFixtureOn(t, overrideConfig, &overrideSeen{})
	path := "/api/items/1?.method=DELETE"
	r := f.do(t, "POST", path, "name=a", formHeader)
	body := readAll(t, r)
	if rl := r.Header.Get("RateLimit"); r.StatusCode != http.StatusOK || !strings.HasPrefix(rl, remaining("0")) {
		t.Errorf("POST %s (PHP's $_GET['_method'] = DELETE): %d, RateLimit %q %s; want 200 with r=0, charged as the DELETE (3 units)",
			path, r.StatusCode, rl, body)
	}
}

// Two spellings PHP reads as one _method that name different methods are
// refused with a 400, as two _method parameters are: PHP serves the last.
func TestForwardAuthRefusesPHPSpellingsOfMethodParamThatDiffer(t *testing.T) {
	f := newFixture(t, overrideConfig)
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "POST",
		"X-Forwarded-Uri": "/api/items/1?_method=POST&.method=DELETE", "X-Forwarded-For": "198.51.100.20"})
	if body := readAll(t, r); r.StatusCode != http.StatusBadRequest {
		t.Errorf("POST ?_method=POST&.method=DELETE: %d %s, want a 400", r.StatusCode, body)
	}
}

// PHP under FastCGI registers a header's variable as it registers a query
// parameter: php-fpm behind Caddy's php_fastcgi (which names a header's
// variable HTTP_ and its name in upper case with "-" as "_", dots kept)
// reads X.HTTP.Method.Override as $_SERVER['HTTP_X_HTTP_METHOD_OVERRIDE'],
// the X-Http-Method-Override that Symfony serves a POST by whatever its
// configuration, and Caddy passes the header on to sluice and the API
// both. Forward-auth judges it as the DELETE it names.
func TestForwardAuthJudgesAMethodOverrideHeaderSpelledWithDots(t *testing.T) {
	f := newFixture(t, overrideConfig)
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/api/items/1",
		"X.HTTP.Method.Override": "DELETE", "X-Forwarded-For": "198.51.100.41"})
	body := readAll(t, r)
	if rl := r.Header.Get("RateLimit"); r.StatusCode != http.StatusOK || !strings.HasPrefix(rl, remaining("0")) {
		t.Errorf("POST /api/items/1 with X.HTTP.Method.Override: DELETE: %d, RateLimit %q %s; want 200 with r=0, charged as the DELETE (3 units)",
			r.StatusCode, rl, body)
	}
}

// The reverse proxy removes a method override spelled with dots from the
// request the upstream gets, as it removes every other spelling.
func TestProxyRemovesAMethodOverrideSpelledWithDots(t *testing.T) {
	up := &headersSeen{}
	f := newFixtureOn(t, overrideConfig, up)
	r := f.do(t, "POST", "/api/items/1", "", map[string]string{"X.HTTP.Method.Override": "DELETE"})
	readAll(t, r)
	if rl := r.Header.Get("RateLimit"); r.StatusCode != http.StatusOK || !strings.HasPrefix(rl, remaining("2")) {
		t.Errorf("%d RateLimit %q, want 200 and r=2 (a POST costs 1)", r.StatusCode, rl)
	}
	for i, vs := range up.got("X.HTTP.Method.Override") {
		if len(vs) > 0 {
			t.Errorf("request %d: the upstream got X.HTTP.Method.Override %q", i, vs)
		}
	}
}
