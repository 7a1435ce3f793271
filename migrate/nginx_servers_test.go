package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedNginxServersLimitTheirOwnHosts: nginx gives a request to the
// server whose server_name matches its Host, so a limit_req in one server
// block limits that server's hosts only; a leading wildcard name matches
// every name ending so.
func TestImportedNginxServersLimitTheirOwnHosts(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=per_ip:10m rate=1r/m;
  server {
    listen 80;
    server_name api.example.com api2.example.com;
    limit_req zone=per_ip;
  }
  server {
    listen 80;
    server_name *.shop.example.com;
    location /cart/ { limit_req zone=per_ip; }
  }
  server {
    listen 80 default_server;
    server_name www.example.com;
    location / { }
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "api.example.com", "/x", "192.0.2.1", 200},
		{"GET", "api2.example.com", "/y", "192.0.2.1", 429}, // one zone: the address's minute is spent
		{"GET", "www.example.com", "/x", "192.0.2.1", 200},  // a server without limit_req
		{"GET", "www.example.com", "/x", "192.0.2.1", 200},
		{"GET", "a.shop.example.com", "/cart/1", "192.0.2.2", 200},
		{"GET", "b.c.shop.example.com", "/cart/2", "192.0.2.2", 429}, // *.shop.example.com, the zone's minute
		{"GET", "a.shop.example.com", "/x", "192.0.2.3", 200},        // not the limited location
		{"GET", "www.example.com", "/cart/1", "192.0.2.3", 200},      // /cart/ of another server
		{"GET", "www.example.com", "/cart/1", "192.0.2.3", 200},
	})
}

// TestImportedNginxServerNameKeyCountsPerServer: a zone keyed by
// $server_name holds one count per server (the server's first name),
// shared by every client of it.
func TestImportedNginxServerNameKeyCountsPerServer(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $server_name zone=per_server:1m rate=2r/m;
  server {
    listen 80;
    server_name a.example.com;
    limit_req zone=per_server burst=1 nodelay;
  }
  server {
    listen 80;
    server_name b.example.com;
    limit_req zone=per_server burst=1 nodelay;
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "a.example.com", "/", "192.0.2.1", 200},
		{"GET", "a.example.com", "/", "192.0.2.2", 200},
		{"GET", "a.example.com", "/", "192.0.2.3", 429}, // server a's burst+1 = 2, whoever asks
		{"GET", "b.example.com", "/", "192.0.2.1", 200}, // server b's own count
		{"GET", "b.example.com", "/", "192.0.2.2", 200},
		{"GET", "b.example.com", "/", "192.0.2.3", 429},
	})
}

// TestImportNginxServersReportsWhatHostsCannotSay: what nginx's server
// selection does that a rule's hosts cannot say is reported: regular
// expression and trailing wildcard names, an exact name of one server
// under another's wildcard, the default server (which also takes every
// Host no server names) and servers on different ports.
func TestImportNginxServersReportsWhatHostsCannotSay(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=per_ip:10m rate=1r/s;
  server {
    listen 80 default_server;
    server_name *.example.com;
    limit_req zone=per_ip;
  }
  server {
    listen 80;
    server_name api.example.com ~^www\d+\.example\.org$ www.example.*;
    limit_req zone=per_ip burst=5;
  }
  server {
    listen 8080;
    server_name admin.example.net;
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, phrase := range []string{`~^www\d+\.example\.org$`, "www.example.*", "api.example.com", "default_server", "8080"} {
		if !reported(tr, phrase) {
			t.Errorf("no difference mentions %q: %+v", phrase, tr.Differences)
		}
	}
}

// TestImportNginxSettingsCountedOnce: a zone's http-level limit_req,
// inherited by two servers, is one setting split into a rule per server;
// with a location's own burst it is two settings, as the report says,
// not three.
func TestImportNginxSettingsCountedOnce(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
    limit_req_zone $binary_remote_addr zone=global:20m rate=20r/s;
    limit_req zone=global burst=40 nodelay;
    server {
        server_name shop.example.com;
        location / { proxy_pass http://shop; }
    }
    server {
        server_name blog.example.com;
        location / { proxy_pass http://blog; }
        location /wp-login.php { limit_req zone=global burst=2 nodelay; }
    }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "used with 2 settings") || hasDifference(tr, false, "used with 3 settings") {
		t.Errorf("the settings of zone global are not counted as 2: %+v", tr.Differences)
	}
}

// TestImportedNginxZoneAcrossServersCountsOnce: a zone used in locations
// of two servers of different hosts counts a key once across them, as
// nginx's zone does: one rule with an alternative per server (its hosts,
// its locations' paths), and a location of one server is not limited on
// the other's hosts.
func TestImportedNginxZoneAcrossServersCountsOnce(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
  limit_req_zone $binary_remote_addr zone=api:10m rate=1r/m;
  server {
    listen 80;
    server_name a.example.com;
    location /orders { limit_req zone=api burst=1 nodelay; }
    location /static/ { }
  }
  server {
    listen 80;
    server_name b.example.com;
    location /billing/ { limit_req zone=api burst=1 nodelay; }
  }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "a.example.com", "/orders", "192.0.2.1", 200},
		{"GET", "b.example.com", "/billing/x", "192.0.2.1", 200},
		{"GET", "a.example.com", "/orders", "192.0.2.1", 429}, // burst+1 = 2, across both servers
		{"GET", "b.example.com", "/billing/y", "192.0.2.1", 429},
		{"GET", "a.example.com", "/billing/x", "192.0.2.1", 200}, // b's location, not a's
		{"GET", "b.example.com", "/orders", "192.0.2.1", 200},
		{"GET", "b.example.com", "/billing/x", "192.0.2.2", 200},
	})
	if len(tr.SluiceRules) != 1 {
		t.Errorf("%d rules, want 1: %+v", len(tr.SluiceRules), tr.SluiceRules)
	}
	if !hasDifference(tr, true, "zone api") || hasDifference(tr, false, "own count") {
		t.Errorf("the report does not say the zone counts once across the servers: %+v", tr.Differences)
	}
}
