package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikPathPrefixIsAStringPrefix: Traefik's PathPrefix(`/api`)
// is a string prefix, which also takes /apix; the rule's /api and /api/
// patterns do not, so the import says so, and not for a prefix ending in
// a slash, which matches what its pattern does.
func TestImportTraefikPathPrefixIsAStringPrefix(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n"+
		"  routers:\n"+
		"    api: {rule: \"Host(`a.example`) && PathPrefix(`/api`)\", middlewares: [rl]}\n"+
		"    v2: {rule: \"PathPrefix(`/v2/`)\", middlewares: [rl]}\n"+
		"    exact: {rule: \"Path(`/login`)\", middlewares: [rl]}\n"+
		"  middlewares:\n"+
		"    rl: {rateLimit: {average: 3}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reported(tr, "/apix") {
		t.Errorf("no difference says that PathPrefix(`/api`) also matches /apix: %+v", tr.Differences)
	}
	for _, p := range []string{"/v2/x", "/loginx"} {
		if reported(tr, p) {
			t.Errorf("%s is reported, though its pattern matches as Traefik does: %+v", p, tr.Differences)
		}
	}
}

// TestImportedTraefikChainLimits: a router that names a chain middleware
// runs the chain's middlewares, so a rateLimit in the chain (of the file
// provider, or of a Kubernetes Middleware) limits the router's requests as
// one named directly does.
func TestImportedTraefikChainLimits(t *testing.T) {
	for name, src := range map[string]string{
		"file provider": "http:\n" +
			"  routers:\n" +
			"    api: {rule: \"PathPrefix(`/api/`)\", middlewares: [secured@file]}\n" +
			"  middlewares:\n" +
			"    secured: {chain: {middlewares: [inner]}}\n" +
			"    inner: {chain: {middlewares: [rl@file]}}\n" +
			"    rl: {rateLimit: {average: 1, period: 1m}}\n",
		"Kubernetes": "kind: IngressRoute\nmetadata: {name: api}\nspec:\n  routes:\n    - {match: \"PathPrefix(`/api/`)\", middlewares: [{name: secured}]}\n" +
			"---\nkind: Middleware\nmetadata: {name: secured}\nspec: {chain: {middlewares: [{name: rl}]}}\n" +
			"---\nkind: Middleware\nmetadata: {name: rl}\nspec: {rateLimit: {average: 1, period: 1m}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("traefik", src, "traefik.yaml")
			if err != nil {
				t.Fatal(err)
			}
			expectStatuses(t, serveImported(t, tr), []sent{
				{"/api/x", "", "192.0.2.1", 200},
				{"/api/x", "", "192.0.2.1", 429}, // the chain's rateLimit
				{"/other", "", "192.0.2.1", 200}, // no router of the chain
				{"/other", "", "192.0.2.1", 200},
			})
		})
	}
}
