package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportNginxSiteFileSaysWhereZonesAre: Debian's and Ubuntu's nginx
// keep a site's server block in sites-enabled/, included by nginx.conf,
// whose http block declares the zones. Imported alone, the site names
// zones it does not declare: the error says the zones are declared in the
// file that includes it, and how to import them together.
func TestImportNginxSiteFileSaysWhereZonesAre(t *testing.T) {
	_, err := migrate.Import("nginx", `server {
    listen 80 default_server;
    server_name _;
    location /api/ {
        limit_req zone=api burst=20 nodelay;
        proxy_pass http://127.0.0.1:3000;
    }
}
`, "default")
	if err == nil || !strings.Contains(err.Error(), `"api"`) || !strings.Contains(err.Error(), "include") {
		t.Errorf("err = %v, want zone api named and the include explained", err)
	}
}
