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
