package migrate_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// nginxKeyOrAddress is nginx's usual limit per API key that falls back to
// the address: a map giving the header's value when the request has one,
// else $binary_remote_addr.
const nginxKeyOrAddress = `http {
    map $http_x_api_key $rl_key {
        default $binary_remote_addr;
        "~.+"   $http_x_api_key;
    }
    limit_req_zone $rl_key zone=api:10m rate=2r/m;
    server {
        location /api/ { limit_req zone=api burst=1 nodelay; }
    }
}
`

// TestImportNginxKeyOrAddress: a zone keyed by a map that reads a header
// when set and the address otherwise counts per value of the header and,
// without it, per address: a rule keyed by the header with fallback: ip,
// as nginx keys it (ip, the default fallback, is not written back by the
// loaded rule), where the key was imported per address alone.
func TestImportNginxKeyOrAddress(t *testing.T) {
	runImportCases(t, []importCase{{
		name:   "a header, else the address",
		format: "nginx",
		src:    nginxKeyOrAddress,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules:  []string{"api paths=[/api/] key=[header:X-Api-Key] header_from=any | per-minute: gcra 2 per 1m0s burst 2"},
		costs:  map[string]int64{"/": 0, "/api/": 1},
		same:   []string{"$rl_key: a map of $http_x_api_key"},
	}, {
		name:   "the empty value mapped to the address, every other to the header",
		format: "nginx",
		src: `http {
    map $http_x_api_key $rl_key {
        ""      $binary_remote_addr;
        default $http_x_api_key;
    }
    limit_req_zone $rl_key zone=api:10m rate=2r/m;
    server {
        location /api/ { limit_req zone=api burst=1 nodelay; }
    }
}
`,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules:  []string{"api paths=[/api/] key=[header:X-Api-Key] header_from=any | per-minute: gcra 2 per 1m0s burst 2"},
		costs:  map[string]int64{"/": 0, "/api/": 1},
	}})
}

// TestImportedNginxKeyOrAddressDecides serves the import: two keys from
// one address count apart, and requests without a key count per address.
func TestImportedNginxKeyOrAddressDecides(t *testing.T) {
	tr, err := migrate.Import("nginx", nginxKeyOrAddress, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	send := func(key, addr string) int {
		r := httptest.NewRequest("GET", "/api/x", nil)
		r.RemoteAddr = addr + ":1234"
		if key != "" {
			r.Header.Set("X-Api-Key", key)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for i, c := range []struct {
		key, addr string
		want      int
	}{
		{"a", "192.0.2.1", 200}, {"a", "192.0.2.1", 200}, {"a", "192.0.2.1", 429},
		{"b", "192.0.2.1", 200}, {"b", "192.0.2.1", 200},
		{"", "192.0.2.1", 200}, {"", "192.0.2.1", 200}, {"", "192.0.2.1", 429},
		{"", "192.0.2.2", 200},
	} {
		if got := send(c.key, c.addr); got != c.want {
			t.Errorf("request %d, key %q from %s: %d, want %d", i, c.key, c.addr, got, c.want)
		}
	}
}
