package migrate_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedAddressLimitsIgnoreMadeUpKeys: a source that counts clients
// by address counts a request by its address whatever API key or bearer
// token it carries. sluice's identity reads Authorization and X-API-Key by
// default; the import writes unknown_keys: ip, sluice's default written
// out, which counts an unlisted key by its address, so that one address
// sending a fresh key with every request is limited as that address.
func TestImportedAddressLimitsIgnoreMadeUpKeys(t *testing.T) {
	for _, c := range []struct{ format, src string }{
		{"nginx", `http {
    limit_req_zone $binary_remote_addr zone=one:10m rate=1r/m;
    server { location / { limit_req zone=one; } }
}
`},
		{"kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {minute: 1, limit_by: ip}
`},
		{"traefik", `http:
  middlewares:
    rl:
      rateLimit: {average: 1, period: 1m}
`},
	} {
		tr, err := migrate.Import(c.format, c.src, "source")
		if err != nil {
			t.Fatal(err)
		}
		h := serveImported(t, tr)
		for i, hdr := range [][2]string{{"", ""}, {"X-Api-Key", "made-up-1"}, {"X-Api-Key", "made-up-2"}, {"Authorization", "Bearer made-up-3"}} {
			r := httptest.NewRequest("GET", "/x", nil)
			r.RemoteAddr = "192.0.2.1:1234"
			if hdr[0] != "" {
				r.Header.Set(hdr[0], hdr[1])
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			want := 429
			if i == 0 {
				want = 200
			}
			if w.Code != want {
				t.Errorf("%s: request %d (%s: %s) from the address of request 0: %d, want %d", c.format, i, hdr[0], hdr[1], w.Code, want)
			}
		}
	}
}
