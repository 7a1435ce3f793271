package migrate_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// nginxPostsOnly limits POST requests per address and leaves the others
// alone, as nginx's documentation of map suggests: a key empty for every
// other method, which nginx does not count.
const nginxPostsOnly = `http {
    map $request_method $post_key {
        default "";
        POST    $binary_remote_addr;
    }
    limit_req_zone $post_key zone=posts:10m rate=1r/m;
    server {
        location /api/ { limit_req zone=posts; }
    }
}
`

// TestImportNginxMethodKey: a zone keyed by a map of $request_method that
// gives the address for some methods and nothing for the others becomes a
// rule of those methods keyed by address, where it was imported per
// address for every method (a GET refused at the POSTs' rate).
func TestImportNginxMethodKey(t *testing.T) {
	runImportCases(t, []importCase{{
		name:   "POSTs by address",
		format: "nginx",
		src:    nginxPostsOnly,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules:  []string{"posts paths=[/api/] methods=[POST] key=[ip/32/128] | per-minute: gcra 1 per 1m0s burst 1"},
		costs:  map[string]int64{"/": 0, "/api/": 1},
		same:   []string{"$post_key: a map of $request_method"},
	}})
}

// TestImportedNginxMethodKeyDecides serves the import: POSTs of one
// address are limited, its GETs never.
func TestImportedNginxMethodKeyDecides(t *testing.T) {
	tr, err := migrate.Import("nginx", nginxPostsOnly, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	for i, c := range []struct {
		method string
		want   int
	}{{"POST", 200}, {"GET", 200}, {"GET", 200}, {"POST", 429}, {"GET", 200}} {
		r := httptest.NewRequest(c.method, "/api/x", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("request %d, %s: %d, want %d", i, c.method, w.Code, c.want)
		}
	}
}
