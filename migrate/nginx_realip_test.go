package migrate_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedNginxRealIPCountsEachClient: behind a load balancer that
// set_real_ip_from trusts, nginx's $binary_remote_addr is the client's
// address from real_ip_header X-Forwarded-For, so two clients behind one
// balancer count apart; the import lists the balancers in
// identity.trusted_proxies, so sluice counts them apart too, and a client
// that reaches sluice directly is not believed.
func TestImportedNginxRealIPCountsEachClient(t *testing.T) {
	tr, err := migrate.Import("nginx", `http {
    set_real_ip_from 10.0.0.0/8;
    set_real_ip_from 192.0.2.77;
    real_ip_header X-Forwarded-For;
    real_ip_recursive on;
    limit_req_zone $binary_remote_addr zone=perip:1m rate=1r/m;
    server {
        limit_req zone=perip;
    }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	for i, c := range []struct {
		peer, forwarded string
		want            int
	}{
		{"10.0.0.5", "198.51.100.1", 200},
		{"10.0.0.5", "198.51.100.2", 200},   // another client behind the same balancer
		{"192.0.2.77", "198.51.100.3", 200}, // a trusted address of its own
		{"10.0.0.6", "198.51.100.1", 429},   // the first client again, through another balancer
		{"203.0.113.9", "198.51.100.4", 200},
		{"203.0.113.9", "198.51.100.5", 429}, // not a balancer: its X-Forwarded-For is not believed
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer + ":1234"
		r.Header.Set("X-Forwarded-For", c.forwarded)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("request %d from %s for %s: %d, want %d", i, c.peer, c.forwarded, w.Code, c.want)
		}
	}
}

// TestImportNginxRealIPReportsWhatItCannotRead: an address header sluice
// does not read (X-Real-IP, nginx's default), the PROXY protocol, and
// real_ip_recursive off are reported, never called the same.
func TestImportNginxRealIPReportsWhatItCannotRead(t *testing.T) {
	for _, c := range []struct{ conf, phrase string }{
		{"set_real_ip_from 10.0.0.0/8;", "X-Real-IP"},
		{"set_real_ip_from 10.0.0.0/8; real_ip_header proxy_protocol;", "proxy_protocol"},
		{"set_real_ip_from 10.0.0.0/8; real_ip_header X-Forwarded-For;", "real_ip_recursive"},
	} {
		tr, err := migrate.Import("nginx", c.conf+"\nlimit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;\nlimit_req zone=z;\n", "nginx.conf")
		if err != nil {
			t.Fatal(err)
		}
		if !reported(tr, c.phrase) {
			t.Errorf("%s: no difference mentions %s: %+v", c.conf, c.phrase, tr.Differences)
		}
	}
}
