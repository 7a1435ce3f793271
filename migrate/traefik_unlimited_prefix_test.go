package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikUnlimitedPathPrefixWithoutSlashIsReported: Traefik's
// PathPrefix(`/api`) is a string prefix that takes /apix too. A router of
// it without a rateLimit outranks the limited PathPrefix(`/`) router (a
// longer rule), so Traefik limits no request of /apix; the import frees
// /api and /api/ only, and /apix counts against the / router's rule. The
// contract: that difference is reported, naming /apix…, as it is for a
// limited router's prefix; PathPrefix(`/api/`) is not reported.
func TestImportTraefikUnlimitedPathPrefixWithoutSlashIsReported(t *testing.T) {
	for _, c := range []struct {
		prefix   string
		reported bool
	}{{"/api", true}, {"/api/", false}} {
		src := "http:\n" +
			"  routers:\n" +
			"    all: {rule: \"PathPrefix(`/`)\", middlewares: [rl]}\n" +
			"    api: {rule: \"PathPrefix(`" + c.prefix + "`)\"}\n" +
			"  middlewares:\n" +
			"    rl: {rateLimit: {average: 1, period: 1m}}\n"
		tr, err := migrate.Import("traefik", src, "traefik.yaml")
		if err != nil {
			t.Fatal(err)
		}
		h := serveImported(t, tr)
		if got := []int{sendKey(h, "/api/x", "", "192.0.2.1"), sendKey(h, "/api/x", "", "192.0.2.1")}; !equalInts(got, []int{200, 200}) {
			t.Errorf("PathPrefix(`%s`): /api/x twice: %v, want both admitted (router api has no rateLimit)", c.prefix, got)
		}
		if got := hasDifference(tr, false, "router api: Traefik's PathPrefix(`/api`) is a string prefix, which also matches /apix…"); got != c.reported {
			t.Errorf("PathPrefix(`%s`): /apix… reported %v, want %v:\n%s", c.prefix, got, c.reported, tr.Report())
		}
	}
}
