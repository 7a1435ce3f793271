package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A client that sends a standard method in another case ("post") reaches
// the handler of that method on an upstream that folds the case (Django
// reads REQUEST_METHOD upper-cased), through net/http, which accepts any
// token as a method: the rules and costs of the method must limit it too,
// or "post /login" escapes a login guard and "post /bulk" costs 1. An
// exemption stays exact: "get /healthz" is no exempt health check.
func TestAMethodInAnotherCaseIsLimitedAsThatMethod(t *testing.T) {
	t.Run("a rule", func(t *testing.T) {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		got := statuses(mw, req{method: "POST", path: "/login", remote: "192.0.2.1:1"},
			req{method: "post", path: "/login", remote: "192.0.2.1:1"},
			req{method: "Post", path: "/login", remote: "192.0.2.1:1"})
		if want := []int{200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("POST, post, Post /login: %v, want %v", got, want)
		}
	})
	t.Run("GET's rule limits a head in another case", func(t *testing.T) {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "reads", Methods: []string{"GET"}, Paths: []string{"/items"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		got := statuses(mw, req{method: "get", path: "/items", remote: "192.0.2.1:1"},
			req{method: "head", path: "/items", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("get, head /items: %v, want %v", got, want)
		}
	})
	t.Run("a cost", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
			Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}, Costs: map[string]int64{"POST /bulk": 10}}}})
		got := statuses(mw, req{method: "post", path: "/bulk", remote: "192.0.2.1:1"},
			req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("post /bulk (10 of 10), then GET /other: %v, want %v", got, want)
		}
	})
	t.Run("an exemption stays exact", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}, Exempt: []string{"GET /healthz"}})
		got := statuses(mw, req{method: "get", path: "/healthz", remote: "192.0.2.1:1"},
			req{method: "get", path: "/healthz", remote: "192.0.2.1:1"},
			req{method: "GET", path: "/healthz", remote: "192.0.2.1:1"})
		if want := []int{200, 429, 200}; !slices.Equal(got, want) {
			t.Errorf("get, get, GET /healthz: %v, want %v", got, want)
		}
	})
}
