package migrate_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A route of Kong's expressions router takes the requests its expression
// matches alone: 'http.path ^= "/a/" && http.method == "POST"' becomes
// the route's paths and methods, so its plugin's limit (1 an hour per
// address) counts POST /a/… and never GET /c, which no route takes.
func TestKongExpressionRouteLimitsWhatItsExpressionMatches(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    routes:
      - name: a
        expression: 'http.path ^= "/a/" && http.method == "POST"'
        plugins: [{name: rate-limiting, config: {hour: 1, limit_by: ip}}]
      - {name: b, paths: [/b]}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	send := func(method, path string) int {
		r := httptest.NewRequest(method, path, nil)
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	got := []int{send("GET", "/c"), send("GET", "/c"), send("GET", "/a/x"), send("POST", "/a/x"), send("POST", "/a/x")}
	if want := []int{200, 200, 200, 200, 429}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] || got[4] != want[4] {
		t.Errorf("GET /c, GET /c, GET /a/x, POST /a/x, POST /a/x: %v, want %v (the route takes POST /a/… alone)", got, want)
	}
}

// An expression the import does not read (here a regular expression)
// leaves its route and its plugins out, reported, rather than limiting
// every request.
func TestKongUnreadExpressionRouteIsLeftOutAndReported(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    routes:
      - name: a
        expression: 'http.path ~ "^/a/[0-9]+$"'
        plugins: [{name: rate-limiting, config: {hour: 1, limit_by: ip}}]
      - name: b
        paths: [/b]
        plugins: [{name: rate-limiting, config: {hour: 1, limit_by: ip}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "route a expression") {
		t.Errorf("the unread expression of route a is not reported")
	}
	h := serveImported(t, tr)
	if got := statusesOf(h, []string{"GET", "/c"}, []string{"GET", "/c"}, []string{"GET", "/a/1"}, []string{"GET", "/a/1"}); got[1] == 429 || got[3] == 429 {
		t.Errorf("GET /c, /c, /a/1, /a/1: %v, want no refusal (route a is left out, /c is no route's)", got)
	}
}
