package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Express (its default, non-strict routing), Rails, Laravel and ASP.NET
// Core serve /v1/login/ as /v1/login: a client that adds the slash must
// not escape the rule of /v1/login, nor pay less than its cost. ServeMux
// routes it elsewhere, so an exemption, which both readings must match,
// stays with the path as written.
func TestATrailingSlashDoesNotEscapeARuleOrACost(t *testing.T) {
	t.Run("a rule", func(t *testing.T) {
		one := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/v1/login"}, Limits: one},
			httplimit.Rule{Name: "users", Paths: []string{"/v1/users/{id}"}, Key: []string{"path:id"}, Limits: one})
		got := statuses(mw, req{method: "POST", path: "/v1/login", remote: "192.0.2.1:1"},
			req{method: "POST", path: "/v1/login/", remote: "192.0.2.1:1"},
			req{method: "POST", path: "/v1/login%2F", remote: "192.0.2.1:1"},
			req{method: "POST", path: "/v1/login//", remote: "192.0.2.1:1"},
			req{method: "POST", path: "/v1/users/7/", remote: "192.0.2.1:1"},
			req{method: "POST", path: "/v1/users/7", remote: "192.0.2.1:1"})
		if want := []int{200, 429, 429, 429, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("/v1/login, /v1/login/, /v1/login%%2F, /v1/login//, /v1/users/7/, /v1/users/7: %v, want %v", got, want)
		}
	})
	t.Run("a subtree and its end stay as ServeMux reads them", func(t *testing.T) {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "root", Paths: []string{"/v1/{$}"}, Key: []string{"rule"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		got := statuses(mw, req{path: "/v1/", remote: "192.0.2.1:1"}, req{path: "/v1/", remote: "192.0.2.2:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("/v1/ twice under /v1/{$}: %v, want %v", got, want)
		}
	})
	t.Run("a cost", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
			Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}, Costs: map[string]int64{"POST /bulk": 10}}}})
		got := statuses(mw, req{method: "POST", path: "/bulk/", remote: "192.0.2.1:1"},
			req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("POST /bulk/ (10 of 10), then GET /other: %v, want %v", got, want)
		}
	})
	t.Run("an exemption stays with the path as written", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}, Exempt: []string{"GET /healthz"}})
		got := statuses(mw, repeat(req{path: "/healthz/", remote: "192.0.2.1:1"}, 2)...)
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("/healthz/ twice: %v, want %v", got, want)
		}
	})
}
