package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// nginx gives GET /api/admin/ to location /api/admin/ (the longest
// matching prefix), whose zone alone counts it: the imported rule of
// location /api/ leaves out the location's root with its slash as it
// leaves out what is below it, so the second request of a client is
// admitted by zone b's 60r/m, not refused by zone a's 1r/m.
func TestAnImportedNginxLocationKeepsItsRootOutOfTheShorterPrefix(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=a:10m rate=1r/m;
  limit_req_zone $binary_remote_addr zone=b:10m rate=60r/m;
  server {
    listen 80;
    location /api/ { limit_req zone=a nodelay; }
    location /api/admin/ { limit_req zone=b burst=10 nodelay; }
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "www.example.com", "/api/admin/x", "192.0.2.1", 200},
		{"GET", "www.example.com", "/api/admin/x", "192.0.2.1", 200},
		{"GET", "www.example.com", "/api/admin/", "192.0.2.2", 200},
		{"GET", "www.example.com", "/api/admin/", "192.0.2.2", 200},
	})
}

// nginx takes GET /api/admin (no trailing slash) into location /api/, the
// longest prefix that matches it: location /api/admin/ does not match it,
// and answers it with a 301 only when it proxies (proxy_pass,
// fastcgi_pass, ...). Served from disk, location /api/admin/ leaves GET
// /api/admin to location /api/, whose zone counts it: the imported rule
// of location /api/ keeps the slashless root (nginx: 200, then 503 to
// one client; 429 here by limit_req_status).
func TestAnImportedNginxLocationLeavesItsSlashlessRootToTheShorterPrefix(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=a:10m rate=1r/m;
  limit_req_zone $binary_remote_addr zone=b:10m rate=60r/m;
  limit_req_status 429;
  server {
    listen 80;
    location /api/ { limit_req zone=a nodelay; proxy_pass http://backend; }
    location /api/admin/ { limit_req zone=b burst=10 nodelay; root /srv/www; }
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "www.example.com", "/api/admin", "192.0.2.1", 200},
		{"GET", "www.example.com", "/api/admin", "192.0.2.1", 429},
	})
}
