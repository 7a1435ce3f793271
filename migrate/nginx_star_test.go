package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/migrate"
)

// An nginx prefix location with a "*" in it matches that character as
// written, which a sluice pattern may not hold (sluice refuses it as a
// glob written by mistake): the location is reported, not imported, and
// the configuration written still loads.
func TestImportNginxLocationWithAStarIsReported(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
    limit_req_zone $binary_remote_addr zone=api:10m rate=10r/s;
    limit_req_zone $binary_remote_addr zone=stars:10m rate=1r/s;
    server {
        location /api/ {
            limit_req zone=api burst=20 nodelay;
        }
        location /x/* {
            limit_req zone=stars;
        }
    }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	files, err := tr.Files(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse(migrate.ConfigFile, []byte(files[migrate.ConfigFile])); err != nil {
		t.Fatalf("the configuration written does not load: %v\n%s", err, files[migrate.ConfigFile])
	}
	for _, d := range tr.Differences {
		if strings.Contains(d.Where, "/x/*") {
			if d.Same || !strings.Contains(d.Text, "zone=stars") || !strings.Contains(d.Text, "not imported") {
				t.Errorf("the location's difference does not say zone=stars is not imported: %+v", d)
			}
			return
		}
	}
	t.Errorf("the location /x/* is not reported: %+v", tr.Differences)
}
