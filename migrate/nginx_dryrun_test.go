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

// TestImportNginxStatusOfEveryPlace: limit_req_status is set per level, so
// a file that refuses with 503 in one location and 429 in another reports
// the 503, whichever location comes last.
func TestImportNginxStatusOfEveryPlace(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
    limit_req_zone $binary_remote_addr zone=z:1m rate=1r/m;
    server {
        location /b/ { limit_req zone=z; }
        location /a/ { limit_req zone=z; limit_req_status 429; }
    }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !reported(tr, "503") {
		t.Errorf("no difference says that /b/ refused with 503: %+v", tr.Differences)
	}
}
