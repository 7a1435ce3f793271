package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedNginxLocationOfANamedServerIsLeftOutOnItsHosts: the first
// server, of no name, limits /api/ by zone a, and its rule matches every
// host; server b limits /api/ by zone b of its own. nginx gives
// b.example.com/api/x to server b, whose zone alone counts it: rule a
// leaves /api/ out on b.example.com (except:), so b's bucket of 2 decides.
func TestImportedNginxLocationOfANamedServerIsLeftOutOnItsHosts(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=a:10m rate=1r/m;
  limit_req_zone $binary_remote_addr zone=b:10m rate=1r/m;
  server {
    listen 80;
    location /api/ { limit_req zone=a nodelay; }
  }
  server {
    listen 80;
    server_name b.example.com;
    location /api/ { limit_req zone=b burst=1 nodelay; }
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "b.example.com", "/api/x", "192.0.2.1", 200},
		{"GET", "b.example.com", "/api/x", "192.0.2.1", 200}, // nginx: zone b alone, burst 1
		{"GET", "b.example.com", "/api/x", "192.0.2.1", 429},
		{"GET", "www.example.com", "/api/x", "192.0.2.2", 200},
		{"GET", "www.example.com", "/api/x", "192.0.2.2", 429}, // zone a, of the default server
	})
	if !hasDifference(tr, true, "location /api/: nginx applies only this location's limits on /api/ of b.example.com") {
		t.Errorf("the report does not say rule a leaves server b's /api/ out: %+v", tr.Differences)
	}
}
