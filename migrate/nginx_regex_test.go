package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportNginxRegexLocationNamesWhatIsLost: a regular-expression
// location cannot be a rule's pattern, so its limits are not imported, and
// the requests it takes are counted as the prefix locations holding them
// are. The report says which zones are lost, so that a login limit in a
// regex location is not found missing only in production.
func TestImportNginxRegexLocationNamesWhatIsLost(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
    limit_req_zone $binary_remote_addr zone=login:10m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=api:10m rate=10r/s;
    server {
        location /api/ {
            limit_req zone=api burst=20 nodelay;
        }
        location ~ ^/api/v[0-9]+/login$ {
            limit_req zone=login burst=3 nodelay;
        }
    }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range tr.Differences {
		if strings.HasPrefix(d.Where, "location ~") {
			if d.Same || !strings.Contains(d.Text, "zone=login") || !strings.Contains(d.Text, "not imported") {
				t.Errorf("the regex location's difference does not say zone=login is not imported: %+v", d)
			}
			return
		}
	}
	t.Errorf("the regex location is not reported: %+v", tr.Differences)
}
