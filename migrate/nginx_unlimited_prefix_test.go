package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportNginxUnlimitedPrefixWithoutSlashIsReported: nginx's prefix
// location /api (no final slash) takes /apix too, the longest prefix.
// Under a limited location /, an unlimited /api leaves /apix unlimited in
// nginx; the import frees /api and /api/ only (cost 0), so /apix costs 1
// under / and counts. The contract: that difference is reported, naming
// /apix…, as it is for a limited location's prefix; location /api/ is not
// reported.
func TestImportNginxUnlimitedPrefixWithoutSlashIsReported(t *testing.T) {
	for _, c := range []struct {
		location string
		reported bool
	}{{"/api", true}, {"/api/", false}} {
		tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=one:10m rate=1r/m;
  server {
    listen 80;
    location / { limit_req zone=one nodelay; }
    location `+c.location+` { proxy_pass http://api; }
  }
}
`, "nginx.conf")
		if err != nil {
			t.Fatal(err)
		}
		h := serveImported(t, tr)
		if got := []int{sendKey(h, "/api/x", "", "192.0.2.1"), sendKey(h, "/api/x", "", "192.0.2.1")}; !equalInts(got, []int{200, 200}) {
			t.Errorf("location %s: /api/x twice: %v, want both admitted (the location sets no limit)", c.location, got)
		}
		if got := hasDifference(tr, false, "location /api: nginx's prefix /api is a string prefix, which also takes /apix…"); got != c.reported {
			t.Errorf("location %s: /apix… reported %v, want %v:\n%s", c.location, got, c.reported, tr.Report())
		}
	}
}
