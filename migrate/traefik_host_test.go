package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikRequestHostReportsThePortAndCase: Traefik's
// sourceCriterion.requestHost keys by the request's Host as the client
// wrote it (Go's req.Host: api.example.com:8443 and API.example.com are
// buckets of their own), while sluice's key host drops the port, the
// case and a final dot; the report says so.
func TestImportTraefikRequestHostReportsThePortAndCase(t *testing.T) {
	tr, err := migrate.Import("traefik", `http:
  middlewares:
    by-host:
      rateLimit: {average: 100, sourceCriterion: {requestHost: true}}
`, "dynamic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, "requestHost") && strings.Contains(d.Text, "port") && strings.Contains(d.Text, "case") {
			return
		}
	}
	t.Errorf("no difference says that Traefik's requestHost keeps the port and the case, which sluice's key host drops: %+v", tr.Differences)
}
