package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedNginxDryRunStaysWhereItIsSet: limit_req_dry_run applies to
// the levels that set it (or inherit it), so a zone used in a dry-run
// location and in an enforcing one refuses only in the second, whichever
// nginx reads first.
func TestImportedNginxDryRunStaysWhereItIsSet(t *testing.T) {
	for _, order := range []string{
		"location /try/ { limit_req zone=z; limit_req_dry_run on; }\n        location /api/ { limit_req zone=z; }",
		"location /api/ { limit_req zone=z; }\n        location /try/ { limit_req zone=z; limit_req_dry_run on; }",
	} {
		tr, err := migrate.Import("nginx", `http {
    limit_req_zone $binary_remote_addr zone=z:1m rate=1r/m;
    server {
        `+order+`
    }
}
`, "nginx.conf")
		if err != nil {
			t.Fatal(err)
		}
		expectStatuses(t, serveImported(t, tr), []sent{
			{"/try/x", "", "192.0.2.1", 200},
			{"/try/x", "", "192.0.2.1", 200}, // dry run: over, and admitted
			{"/api/x", "", "192.0.2.2", 200},
			{"/api/x", "", "192.0.2.2", 429}, // enforced
		})
	}
}
