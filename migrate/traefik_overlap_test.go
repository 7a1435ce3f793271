package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikNarrowerRouterBelowIsReported: router login
// (POST /v1/login on api.example.com) lies below router api (/v1 on the
// same host, any method), with the longer rule, so more priority; Traefik
// sends login's requests to login alone, and rule api leaves them out by
// login's host, path and method (except:). The report says so; routers of
// other hosts say nothing.
func TestImportTraefikNarrowerRouterBelowIsReported(t *testing.T) {
	tr, err := migrate.Import("traefik", `http:
  routers:
    api:
      rule: Host(`+"`api.example.com`"+`) && PathPrefix(`+"`/v1`"+`)
      middlewares: [api-ratelimit]
      service: api
    login:
      rule: Host(`+"`api.example.com`"+`) && Path(`+"`/v1/login`"+`) && Method(`+"`POST`"+`)
      middlewares: [login-ratelimit]
      service: api
    other:
      rule: Host(`+"`www.example.com`"+`) && Path(`+"`/v1/login`"+`)
      middlewares: [login-ratelimit]
      service: api
  middlewares:
    api-ratelimit:
      rateLimit: {average: 100, burst: 200}
    login-ratelimit:
      rateLimit: {average: 5, period: 1m, burst: 5}
`, "dynamic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range tr.Differences {
		if d.Where == "router login" && d.Same && strings.Contains(d.Text, "rule api of router api leaves them out") {
			found = true
		}
		if d.Where == "router other" {
			t.Errorf("router other, of another host than router api, reported: %q", d.Text)
		}
	}
	if !found {
		t.Errorf("the report does not say that rule api leaves router login's requests out: %+v", tr.Differences)
	}
}
