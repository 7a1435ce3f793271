package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Tomcat, Jetty and Spring drop a segment's path parameters (";" and what
// follows, jsessionid's place) before they route: /v1/login;x=1 is
// /v1/login to them, and /v1/x/..;/login is /v1/login once the dot
// segment goes. A client adding parameters must not escape the rule of
// the path, nor pay less than its cost; an exemption stays with the path
// as ServeMux reads it.
func TestPathParametersDoNotEscapeARuleOrACost(t *testing.T) {
	t.Run("a rule", func(t *testing.T) {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/v1/login"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		from := func(path string) req { return req{method: "POST", path: path, remote: "192.0.2.1:1"} }
		got := statuses(mw, from("/v1/login"), from("/v1/login;jsessionid=1"), from("/v1;a=b/login"),
			from("/v1/x/..;/login"), from("/v1/login;/"))
		if want := []int{200, 429, 429, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("/v1/login, /v1/login;jsessionid=1, /v1;a=b/login, /v1/x/..;/login, /v1/login;/: %v, want %v", got, want)
		}
	})
	t.Run("a cost", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
			Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}, Costs: map[string]int64{"POST /bulk": 10}}}})
		got := statuses(mw, req{method: "POST", path: "/bulk;x", remote: "192.0.2.1:1"},
			req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("POST /bulk;x (10 of 10), then GET /other: %v, want %v", got, want)
		}
	})
	t.Run("an exemption stays with the path as written", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}, Exempt: []string{"GET /healthz"}})
		got := statuses(mw, repeat(req{path: "/healthz;x", remote: "192.0.2.1:1"}, 2)...)
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("/healthz;x twice: %v, want %v", got, want)
		}
	})
}
