package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedNginxUnlimitedLocationOfAnotherServerKeepsTheLimit: server
// a limits /api/; server b serves /api/v1/ without limit_req. nginx gives
// a.example.com/api/v1/x to server a's /api/ location: limited. A path's
// cost holds on every host, so b's unlimited /api/v1/ must not cost 0: it
// keeps the cost of a's location, and no rule of b's host counts it.
func TestImportedNginxUnlimitedLocationOfAnotherServerKeepsTheLimit(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=api:10m rate=1r/m;
  server {
    listen 80;
    server_name a.example.com;
    location /api/ { limit_req zone=api nodelay; }
  }
  server {
    listen 80;
    server_name b.example.com;
    location /api/v1/ { proxy_pass http://b; }
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "a.example.com", "/api/v1/x", "192.0.2.1", 200},
		{"GET", "a.example.com", "/api/v1/x", "192.0.2.1", 429}, // nginx: server a's /api/ location, 1r/m, burst 0
	})
}

// TestImportedNginxUnlimitedLocationDoesNotFreeAnotherServersLimit: server
// b limits /static/ and comes first; server a limits / and serves /static/
// without limit_req. nginx limits b.example.com/static/x by b's zone and
// a.example.com/static/x not at all: /static/ keeps b's cost of 1, and
// rule all, of a's /, leaves /static/ out (except_paths).
func TestImportedNginxUnlimitedLocationDoesNotFreeAnotherServersLimit(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=st:10m rate=1r/m;
  limit_req_zone $binary_remote_addr zone=all:10m rate=1r/m;
  server {
    listen 80;
    server_name b.example.com;
    location /static/ { limit_req zone=st nodelay; }
  }
  server {
    listen 80;
    server_name a.example.com;
    location / { limit_req zone=all nodelay; }
    location /static/ { root /srv; }
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "b.example.com", "/static/x", "192.0.2.1", 200},
		{"GET", "b.example.com", "/static/x", "192.0.2.1", 429}, // nginx: zone st, 1r/m, burst 0
		{"GET", "a.example.com", "/static/x", "192.0.2.1", 200}, // nginx: a's /static/, no limit_req
		{"GET", "a.example.com", "/static/x", "192.0.2.1", 200},
		{"GET", "a.example.com", "/", "192.0.2.1", 200},
		{"GET", "a.example.com", "/", "192.0.2.1", 429}, // zone all
	})
}

// TestImportedNginxUnlimitedLocationIsLeftOutWhenAServerLimitsEverything:
// server b limits every path (limit_req at its level), so no path costs 0;
// server a limits /api/ and has /api/public/ without limit_req (a sibling,
// not nested: it inherits server a's level, which has none). nginx does not
// limit a.example.com/api/public/x: rule api leaves it out (except_paths).
func TestImportedNginxUnlimitedLocationIsLeftOutWhenAServerLimitsEverything(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=api:10m rate=1r/m;
  limit_req_zone $binary_remote_addr zone=all:10m rate=1r/m;
  server {
    listen 80;
    server_name a.example.com;
    location /api/ { limit_req zone=api nodelay; }
    location /api/public/ { proxy_pass http://a; }
  }
  server {
    listen 80;
    server_name b.example.com;
    limit_req zone=all nodelay;
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "a.example.com", "/api/public/x", "192.0.2.1", 200},
		{"GET", "a.example.com", "/api/public/x", "192.0.2.1", 200}, // nginx: no limit_req there
		{"GET", "a.example.com", "/api/public/x", "192.0.2.1", 200},
		{"GET", "a.example.com", "/api/x", "192.0.2.1", 200},
		{"GET", "a.example.com", "/api/x", "192.0.2.1", 429}, // zone api
	})
}

// TestImportedNginxUnlimitedLocationIsLeftOutOnItsServersHosts: the first
// server, of no name, is the default one and limits /api/ on every host
// its rule matches; server b serves /api/public/ without limit_req, and
// server c limits /api/public/ by a zone of its own, so /api/public/ keeps
// its cost of 1. nginx gives b.example.com/api/public/x to server b: the
// rule of zone api leaves /api/public/ out on b's host alone (except:).
func TestImportedNginxUnlimitedLocationIsLeftOutOnItsServersHosts(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=api:10m rate=1r/m;
  limit_req_zone $binary_remote_addr zone=pub:10m rate=1r/m;
  server {
    listen 80;
    location /api/ { limit_req zone=api nodelay; }
  }
  server {
    listen 80;
    server_name b.example.com;
    location /api/public/ { proxy_pass http://b; }
  }
  server {
    listen 80;
    server_name c.example.com;
    location /api/public/ { limit_req zone=pub nodelay; }
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "b.example.com", "/api/public/x", "192.0.2.1", 200},
		{"GET", "b.example.com", "/api/public/x", "192.0.2.1", 200}, // nginx: server b's /api/public/, no limit_req
		{"GET", "b.example.com", "/api/public/x", "192.0.2.1", 200},
		{"GET", "c.example.com", "/api/public/x", "192.0.2.2", 200},
		{"GET", "c.example.com", "/api/public/x", "192.0.2.2", 429}, // zone pub
		{"GET", "www.example.com", "/api/x", "192.0.2.3", 200},
		{"GET", "www.example.com", "/api/x", "192.0.2.3", 429}, // zone api, of the default server
	})
	if !hasDifference(tr, true, "location /api/public/: nginx applies no limit on /api/public/ of b.example.com") {
		t.Errorf("the report does not say rule api leaves server b's /api/public/ out: %+v", tr.Differences)
	}
}
