package server_test

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A caller whose token is valid but lacks the endpoint's scope gets 403
// challenged as RFC 6750 §3.1 says: WWW-Authenticate: Bearer
// realm="sluice", error="insufficient_scope", scope="<the scope needed>",
// whether the token came as Authorization: Bearer or as Sluice-Token.
func TestATokenWithoutTheScopeIsChallengedForIt(t *testing.T) {
	cfg := testConfig + `
admin:
  loopback_scopes: []
  callers:
    - {name: reader, token_sha256: ` + sha256Hex("reader-token") + `, scopes: [read]}
    - {name: gateway, token_sha256: ` + sha256Hex(gatewayToken) + `, scopes: [check]}
`
	f := newFixture(t, cfg)
	for _, c := range []struct {
		name, method, path, body string
		header                   map[string]string
		want                     string
	}{
		{"a reader resets a key, by Authorization", "DELETE", "/v1/keys/ext:a", "",
			map[string]string{"Authorization": "Bearer reader-token"},
			`Bearer realm="sluice", error="insufficient_scope", scope="admin"`},
		{"a reader resets a key, by Sluice-Token", "DELETE", "/v1/keys/ext:a", "",
			map[string]string{"Sluice-Token": "reader-token"},
			`Bearer realm="sluice", error="insufficient_scope", scope="admin"`},
		{"a reader asks the decision API", "POST", "/v1/check", `{"user":"u"}`,
			map[string]string{"Authorization": "Bearer reader-token"},
			`Bearer realm="sluice", error="insufficient_scope", scope="check"`},
		{"a gateway chooses a plan", "POST", "/v1/check", `{"user":"u","plan":"free"}`,
			map[string]string{"Authorization": "Bearer " + gatewayToken},
			`Bearer realm="sluice", error="insufficient_scope", scope="override_plan"`},
	} {
		r := f.send(t, f.admin, c.method, c.path, c.body, c.header)
		readAll(t, r)
		if got := r.Header.Get("WWW-Authenticate"); r.StatusCode != http.StatusForbidden || got != c.want {
			t.Errorf("%s: %d, WWW-Authenticate %q; want 403 and %q", c.name, r.StatusCode, got, c.want)
		}
	}
}

// A caller known by its client certificate that lacks the scope gets 403
// without a challenge: it sent no token, and a token is not what it
// needs.
func TestACertificateWithoutTheScopeIsNotChallenged(t *testing.T) {
	ca := testpki.New(t, "sluice test CA")
	ca.Server(t, "server")
	billing := ca.Client(t, "billing.internal")
	file := filepath.Join(ca.Dir, "sluice.yaml")
	cfgText := testConfig + `
admin:
  tls: {cert_file: server.pem, key_file: server-key.pem, client_ca_file: ca.pem}
  loopback_scopes: []
  callers:
    - {name: billing, certificate: billing.internal, scopes: [check]}
`
	if err := os.WriteFile(file, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{billing}}}}
	req, _ := http.NewRequest("DELETE", "https://"+addrs.admin+"/v1/keys/ext:a", nil)
	r, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if got := r.Header.Get("WWW-Authenticate"); r.StatusCode != http.StatusForbidden || got != "" {
		t.Errorf("billing's certificate, holding check only, resets a key: %d, WWW-Authenticate %q; want 403 and none", r.StatusCode, got)
	}
}
