package migrate_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedNginxAddressZoneWithJWTCountsByAddress: nginx Plus counts a
// zone keyed by $binary_remote_addr per address, whatever token the
// request carries. With auth_jwt_key_file the import writes identity.jwt,
// under which a plan's limits count each verified token's subject, so the
// zone must be a rule keyed by the address (ip/32/128): two users behind
// one address share one bucket, as in nginx.
func TestImportedNginxAddressZoneWithJWTCountsByAddress(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(t.TempDir(), "api.jwk")
	jwk := `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `","kid":"k1"}]}`
	if err := os.WriteFile(keys, []byte(jwk), 0o600); err != nil {
		t.Fatal(err)
	}
	token := func(sub string) string {
		enc := base64.RawURLEncoding.EncodeToString
		signing := enc([]byte(`{"alg":"EdDSA","kid":"k1","typ":"JWT"}`)) + "." + enc([]byte(`{"sub":"`+sub+`","exp":4102444800}`))
		return signing + "." + enc(ed25519.Sign(priv, []byte(signing)))
	}
	tr, err := migrate.Import("nginx", `http {
    limit_req_zone $binary_remote_addr zone=perip:10m rate=1r/m;
    server {
        auth_jwt "api";
        auth_jwt_key_file `+keys+`;
        location /api/ { limit_req zone=perip nodelay; }
    }
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	for i, c := range []struct {
		sub  string
		want int
	}{{"alice", 200}, {"bob", 429}} { // nginx: one address, 1r/m, burst 0
		r := httptest.NewRequest("GET", "http://api.example.com/api/x", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("Authorization", "Bearer "+token(c.sub))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("request %d (sub %s) from 192.0.2.1: %d, want %d (RateLimit: %s)", i, c.sub, w.Code, c.want, w.Header().Get("RateLimit"))
		}
	}
}
