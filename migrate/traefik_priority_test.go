package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedTraefikExplicitPriorityWins: Traefik sends a request to the
// matching router of the highest priority; router api sets priority 100,
// so /api/public/x is api's (limited), not public's (priority: its rule's
// length, 26), though public's path is the longer: /api/public/ keeps the
// cost of api's /api/, and rule api does not leave it out.
func TestImportedTraefikExplicitPriorityWins(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n  routers:\n"+
		"    api: {rule: \"PathPrefix(`/api`)\", priority: 100, middlewares: [one], service: s}\n"+
		"    public: {rule: \"PathPrefix(`/api/public`)\", service: s}\n"+
		"  middlewares:\n"+
		"    one: {rateLimit: {average: 1}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/api/public/x", "", "192.0.2.1", 200},
		{"/api/public/x", "", "192.0.2.1", 429}, // Traefik: router api (priority 100), its bucket of 1
	})
}

// TestImportedTraefikDefaultPriorityIsTheRuleLength: without priority,
// Traefik's priority is the length of the rule text, not the depth of its
// path: `Host(`api.example.com`) && PathPrefix(`/`)` (41 characters)
// outranks `PathPrefix(`/health`)` (21), so api.example.com/health is the
// limited router's, while other hosts' /health is router health's.
func TestImportedTraefikDefaultPriorityIsTheRuleLength(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n  routers:\n"+
		"    api: {rule: \"Host(`api.example.com`) && PathPrefix(`/`)\", middlewares: [one], service: s}\n"+
		"    health: {rule: \"PathPrefix(`/health`)\", service: s}\n"+
		"  middlewares:\n"+
		"    one: {rateLimit: {average: 1}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "api.example.com", "/health", "192.0.2.1", 200},
		{"GET", "api.example.com", "/health", "192.0.2.1", 429}, // Traefik: router api, the longer rule
		{"GET", "www.example.com", "/health", "192.0.2.2", 200}, // router health: no rate limit
		{"GET", "www.example.com", "/health", "192.0.2.2", 200},
	})
}

// TestImportedTraefikUnlimitedRouterIsLeftOutWhenAnotherLimitsAWholeHost:
// router public (PathPrefix /api/public, no middleware) takes /api/public/x
// from router api (its rule is the longer), so Traefik does not limit it.
// Router site limits a whole host (no path), so no path costs 0; rule api
// leaves public's paths out all the same (except_paths), and rule api
// leaves out site's host, whose rule is longer than api's (except:).
func TestImportedTraefikUnlimitedRouterIsLeftOutWhenAnotherLimitsAWholeHost(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n  routers:\n"+
		"    site: {rule: \"Host(`www.example.com`)\", middlewares: [two], service: s}\n"+
		"    api: {rule: \"PathPrefix(`/api`)\", middlewares: [one], service: s}\n"+
		"    public: {rule: \"PathPrefix(`/api/public`)\", service: s}\n"+
		"  middlewares:\n"+
		"    one: {rateLimit: {average: 1}}\n"+
		"    two: {rateLimit: {average: 100}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "api.example.com", "/api/public/x", "192.0.2.1", 200},
		{"GET", "api.example.com", "/api/public/x", "192.0.2.1", 200}, // Traefik: router public, no rate limit
		{"GET", "api.example.com", "/api/public/x", "192.0.2.1", 200},
		{"GET", "api.example.com", "/api/x", "192.0.2.1", 200},
		{"GET", "api.example.com", "/api/x", "192.0.2.1", 429}, // router api, average 1
		{"GET", "www.example.com", "/api/x", "192.0.2.3", 200}, // router site (priority 23 above api's 18), burst 1
		{"GET", "www.example.com", "/api/x", "192.0.2.3", 429},
	})
}

// TestImportedTraefikUnlimitedRouterOfALimitedHostIsLeftOut: router site
// limits the whole host; router static, on the same host and /static, has
// no rate limit and the longer rule, so Traefik sends /static/x to it,
// unlimited: rule site leaves static's paths out (except_paths).
func TestImportedTraefikUnlimitedRouterOfALimitedHostIsLeftOut(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n  routers:\n"+
		"    site: {rule: \"Host(`www.example.com`)\", middlewares: [one], service: s}\n"+
		"    static: {rule: \"Host(`www.example.com`) && PathPrefix(`/static`)\", service: s}\n"+
		"  middlewares:\n"+
		"    one: {rateLimit: {average: 1}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "www.example.com", "/static/app.js", "192.0.2.1", 200},
		{"GET", "www.example.com", "/static/app.css", "192.0.2.1", 200}, // Traefik: router static, no rate limit
		{"GET", "www.example.com", "/static/logo.png", "192.0.2.1", 200},
		{"GET", "www.example.com", "/", "192.0.2.1", 200},
		{"GET", "www.example.com", "/", "192.0.2.1", 429}, // router site, average 1
	})
}

// TestImportedTraefikGetRouterDoesNotTakeHead: Traefik's Method(`GET`)
// matches GET alone, so HEAD /search goes to router search, which has no
// rate limit; sluice's rule of GET matches HEAD too, so it leaves HEAD
// out (except:).
func TestImportedTraefikGetRouterDoesNotTakeHead(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n  routers:\n"+
		"    search-get: {rule: \"Method(`GET`) && Path(`/search`)\", middlewares: [one], service: s}\n"+
		"    search: {rule: \"Path(`/search`)\", service: s}\n"+
		"  middlewares:\n"+
		"    one: {rateLimit: {average: 1}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"HEAD", "api.example.com", "/search", "192.0.2.1", 200},
		{"HEAD", "api.example.com", "/search", "192.0.2.1", 200}, // Traefik: router search, no rate limit
		{"HEAD", "api.example.com", "/search", "192.0.2.1", 200},
		{"GET", "api.example.com", "/search", "192.0.2.1", 200},
		{"GET", "api.example.com", "/search", "192.0.2.1", 429}, // router search-get, average 1
	})
}

// TestImportTraefikRoutersOfEqualPriorityAreReported: two routers of rules
// of the same length (their priority) that match the same requests are in
// no set order in Traefik: the report says the rule counts them.
func TestImportTraefikRoutersOfEqualPriorityAreReported(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n  routers:\n"+
		"    a: {rule: \"PathPrefix(`/aa`)\", middlewares: [one], service: s}\n"+
		"    b: {rule: \"PathPrefix(`/aa/b`)\", priority: 17, service: s}\n"+
		"  middlewares:\n"+
		"    one: {rateLimit: {average: 1}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "router b: it and router a have the same priority (17)") {
		t.Errorf("the report does not say routers a and b have the same priority: %+v", tr.Differences)
	}
}
