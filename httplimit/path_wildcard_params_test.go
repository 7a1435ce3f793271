package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule keyed by a path wildcard is one count per tenant, which every
// client spends. Tomcat, Jetty and Spring route "/v1/tenants/acme;x/uploads"
// as "/v1/tenants/acme/uploads" (the package's reading 4, and the "path"
// key, drop segment parameters: "each resource its own count, however it
// is spelled"), so its {tenant} is "acme": a client appending ";1", ";2",
// … to the tenant must not get the tenant's whole quota again each time.
// A {rest...} wildcard is read the same way, its dot segments resolved
// after its parameters are dropped, as those servers route it.
func TestAPathWildcardKeyIgnoresSegmentParameters(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "uploads", Paths: []string{"/v1/tenants/{tenant}/uploads"},
		Key: []string{"path:tenant"}, Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
	got := statuses(mw,
		req{path: "/v1/tenants/acme/uploads", remote: "192.0.2.1:1"},
		req{path: "/v1/tenants/acme/uploads", remote: "192.0.2.2:1"},
		req{path: "/v1/tenants/acme;1/uploads", remote: "192.0.2.3:1"},
		req{path: "/v1/tenants/acme;jsessionid=2/uploads", remote: "192.0.2.4:1"},
		req{path: "/v1/tenants/other;1/uploads", remote: "192.0.2.5:1"},
	)
	if want := []int{200, 200, 429, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("tenant acme ×2, then acme;1, acme;jsessionid=2 and other;1: %v, want %v", got, want)
	}

	mw, _ = rulesMiddleware(t, httplimit.Rule{Name: "files", Paths: []string{"/files/{name...}"},
		Key: []string{"path:name"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got = statuses(mw,
		req{path: "/files/a/b", remote: "192.0.2.1:1"},
		req{path: "/files/a;x/b;y", remote: "192.0.2.2:1"},
		req{path: "/files/a/x;1/..;/b", remote: "192.0.2.3:1"},
		req{path: "/files/a/c", remote: "192.0.2.4:1"},
	)
	if want := []int{200, 429, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("a/b, then a;x/b;y and a/x;1/..;/b, then a/c: %v, want %v", got, want)
	}
}
