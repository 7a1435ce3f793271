package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// An exempt route's subtree exempts its requests as written, not another
// endpoint reached through it: Tomcat, Jetty and Spring drop a segment's
// path parameters before they resolve dot segments, and route
// /internal/..;/api/generate as /api/generate, so that request is limited
// as that endpoint is. A request that stays inside the subtree once its
// parameters are dropped (/internal/x;v=1) keeps its exemption.
func TestAPathParameterDoesNotLeaveAnExemptSubtreeExempt(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}, Exempt: []string{"GET /internal/"}})
	got := statuses(mw, repeat(req{path: "/internal/..;/api/generate", remote: "192.0.2.1:1"}, 2)...)
	if want := []int{200, 429}; !slices.Equal(got, want) {
		t.Errorf("/internal/..;/api/generate twice: %v, want %v: limited as /api/generate", got, want)
	}
	got = statuses(mw, repeat(req{path: "/internal/status;v=1", remote: "192.0.2.2:1"}, 3)...)
	if want := []int{200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("/internal/status;v=1 three times: %v, want %v: still in the exempt subtree", got, want)
	}
}

// An exempt subtree does not exempt its root written without the slash
// (GET /static under exempt GET /static/), which ServeMux matches only by
// redirecting it to the subtree: behind sluice's proxy it reaches the
// upstream as /static, which may be an endpoint of its own.
func TestAnExemptSubtreeDoesNotExemptItsRootWithoutTheSlash(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}, Exempt: []string{"GET /static/"}})
	if got, want := statuses(mw, repeat(req{path: "/static", remote: "192.0.2.1:1"}, 2)...), []int{200, 429}; !slices.Equal(got, want) {
		t.Errorf("GET /static twice: %v, want %v", got, want)
	}
	if got, want := statuses(mw, repeat(req{path: "/static/app.js", remote: "192.0.2.2:1"}, 3)...), []int{200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("GET /static/app.js three times: %v, want %v", got, want)
	}
}
