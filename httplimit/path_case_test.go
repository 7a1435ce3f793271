package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Express (by default) and ASP.NET Core route paths in any case:
// /V1/LOGIN is /v1/login to them. A client changing the case of a path
// must not escape its rule; a path a rule leaves out (ExceptPaths) is
// left out in any case too, as those upstreams serve it as that path.
func TestACaseChangeDoesNotEscapeARule(t *testing.T) {
	one := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
	mw, _ := rulesMiddleware(t,
		httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/v1/login"}, Limits: one},
		httplimit.Rule{Name: "api", Paths: []string{"/API/"}, ExceptPaths: []string{"/api/health"}, Key: []string{"rule"}, Limits: one})
	from := func(method, path string) req { return req{method: method, path: path, remote: "192.0.2.1:1"} }
	got := statuses(mw, from("POST", "/v1/login"), from("POST", "/V1/Login"), from("POST", "/v1/LOGIN/"),
		from("GET", "/Api/Health"), from("GET", "/api/health"), from("GET", "/api/items"), from("GET", "/API/ITEMS"))
	if want := []int{200, 429, 429, 200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("/v1/login, /V1/Login, /v1/LOGIN/, /Api/Health, /api/health, /api/items, /API/ITEMS: %v, want %v", got, want)
	}
}
