package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikEntryPointsAreReported: Traefik gives a request only to
// the routers of the entry point (address and port) it arrived on: /api on
// entry point internal is router api-internal's, without a rate limit.
// sluice's rules match every port, so the rule of api-public counts
// internal /api too: reported, naming the other entry point.
func TestImportTraefikEntryPointsAreReported(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n  routers:\n"+
		"    api-public: {rule: \"PathPrefix(`/api`)\", entryPoints: [websecure], middlewares: [one], service: s}\n"+
		"    api-internal: {rule: \"PathPrefix(`/api`)\", entryPoints: [internal], service: s}\n"+
		"  middlewares:\n"+
		"    one: {rateLimit: {average: 1}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reported(tr, "internal") {
		t.Errorf("no difference names entry point internal, whose /api Traefik does not limit: %+v", tr.Differences)
	}
}
