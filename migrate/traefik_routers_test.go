package migrate_test

import (
	"net/http/httptest"
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

// TestImportedTraefikIPv6Subnet: ipStrategy.ipv6Subnet (Traefik 3.1) makes
// every IPv6 address of one subnet one source, with a router's rule and
// with a plan's limit alike.
func TestImportedTraefikIPv6Subnet(t *testing.T) {
	for name, routers := range map[string]string{
		"plan limit": "",
		"rule":       "  routers:\n    api: {rule: \"PathPrefix(`/`)\", middlewares: [rl]}\n",
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("traefik", "http:\n"+routers+
				"  middlewares:\n"+
				"    rl: {rateLimit: {average: 1, period: 1m, sourceCriterion: {ipStrategy: {ipv6Subnet: 64}}}}\n", "traefik.yaml")
			if err != nil {
				t.Fatal(err)
			}
			h := serveImported(t, tr)
			for i, c := range []struct {
				from string
				want int
			}{
				{"2001:db8:0:1::1", 200},
				{"2001:db8:0:1::2", 429}, // the same /64: one source
				{"2001:db8:0:2::1", 200},
			} {
				r := httptest.NewRequest("GET", "/x", nil)
				r.RemoteAddr = "[" + c.from + "]:1234"
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != c.want {
					t.Errorf("request %d from %s: %d, want %d", i, c.from, w.Code, c.want)
				}
			}
		})
	}
}
