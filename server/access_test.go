package server_test

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// checkOnlyAdmin has a caller that may check but not choose a plan; loopback
// holds the default (read).
const checkOnlyAdmin = `
admin:
  callers:
    - {name: tests, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [read, check, override_plan, admin]}
    - {name: gateway, token_sha256: a1c2ab15d5b2ab65a8e40e9fb7ca8b8cc8a73a0b0f9c7bbf2f3bd3ee3e0f4f3a, scopes: [check]}
`

const gatewayToken = "gateway-token"

// TestStrangersAreRefusedAndSpendNothing: without a token the decision API
// and forward-auth answer 401 and decide nothing — a victim named in the
// body keeps its whole quota; a caller with check but not override_plan
// cannot send a plan (403, nothing spent); a made-up token is a stranger
// even from loopback.
func TestStrangersAreRefusedAndSpendNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, testConfig+strings.Replace(checkOnlyAdmin, "a1c2ab15d5b2ab65a8e40e9fb7ca8b8cc8a73a0b0f9c7bbf2f3bd3ee3e0f4f3a", sha256Hex(gatewayToken), 1), kind)
		none := map[string]string{server.TokenHeader: ""}
		for _, c := range []struct {
			name, method, path, body string
			header                   map[string]string
			want                     int
		}{
			{"a check without a token", "POST", "/v1/check", `{"user":"victim","cost":3}`, none, 401},
			{"a check with a made-up token", "POST", "/v1/check", `{"user":"victim","cost":3}`, map[string]string{server.TokenHeader: "guess"}, 401},
			{"a check with a made-up bearer", "POST", "/v1/check", `{"user":"victim","cost":3}`, map[string]string{server.TokenHeader: "", "Authorization": "Bearer guess"}, 401},
			{"a plan without override_plan", "POST", "/v1/check", `{"user":"victim","plan":"pro","cost":3}`, map[string]string{server.TokenHeader: gatewayToken}, 403},
			{"forward-auth without a token", "GET", "/v1/forward-auth", "", map[string]string{server.TokenHeader: "", "X-Forwarded-For": "198.51.100.50", "Authorization": "Bearer demo-free-key"}, 401},
			{"an API key is no caller token", "GET", "/v1/forward-auth", "", map[string]string{server.TokenHeader: "", "Authorization": "Bearer " + testToken}, 401},
			{"a settle without a token", "POST", "/v1/settle", `{"id":"guess","status":500}`, none, 401},
			{"a pin without a token", "PUT", "/v1/degradation", `{"level":"critical"}`, none, 401},
			{"a token's explanation without a token", "POST", "/v1/tokens", `{"token":"a.b.c"}`, none, 401},
			{"a token's explanation by a caller without admin", "POST", "/v1/tokens", `{"token":"a.b.c"}`, map[string]string{server.TokenHeader: gatewayToken}, 403},
			{"a pin by a caller without admin", "PUT", "/v1/degradation", `{"level":"critical"}`, map[string]string{server.TokenHeader: gatewayToken}, 403},
		} {
			r := f.do(t, c.method, c.path, c.body, c.header)
			body := readAll(t, r)
			if r.StatusCode != c.want || r.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s: %d %q %s, want %d with a problem body", c.name, r.StatusCode, r.Header.Get("Content-Type"), body, c.want)
			}
			if c.want == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: a 401 without WWW-Authenticate", c.name)
			}
			for _, leak := range []string{"victim", "free", "pro", "allowed", "remaining"} {
				if strings.Contains(body, leak) {
					t.Errorf("%s: the refusal says %q: %s", c.name, leak, body)
				}
			}
		}
		// The victim's 3 units and the forward-auth client's are whole.
		r := f.do(t, "POST", "/v1/check", `{"user":"victim","cost":3}`, map[string]string{server.TokenHeader: gatewayToken})
		if body := readAll(t, r); !strings.Contains(body, `"allowed":true`) || !strings.Contains(body, `"remaining":0`) {
			t.Errorf("the victim after the strangers: %s", body)
		}
		r = f.do(t, "GET", "/v1/forward-auth", "", map[string]string{server.TokenHeader: gatewayToken, "X-Forwarded-For": "198.51.100.50",
			"Authorization": "Bearer demo-free-key", "X-Forwarded-Uri": "/api/generate", "X-Forwarded-Method": "POST"})
		if r.StatusCode != 200 || r.Header.Get("RateLimit") != `"per-minute";r=1;t=60` {
			t.Errorf("forward-auth after the strangers: %d %q", r.StatusCode, r.Header.Get("RateLimit"))
		}
		if got := f.srv.Degradation().Level; got != 0 {
			t.Errorf("a stranger pinned level %v", got)
		}
		f.noStoreErrors(t)
	})
}

// TestLoopbackScopesAreOnlyWhatIsGranted: loopback callers without a token
// hold admin.loopback_scopes — read by default: metrics yes, decisions no.
func TestLoopbackScopesAreOnlyWhatIsGranted(t *testing.T) {
	f := newFixture(t, testConfig)
	none := map[string]string{server.TokenHeader: ""}
	for path, want := range map[string]int{"/metrics": 200, "/dashboard/data": 200, "/readyz": 200} {
		if r := f.do(t, "GET", path, "", none); r.StatusCode != want {
			t.Errorf("GET %s from loopback: %d, want %d", path, r.StatusCode, want)
		}
	}
	if r := f.do(t, "POST", "/v1/check", `{"user":"u"}`, none); r.StatusCode != 401 {
		t.Errorf("a check from loopback without a token: %d, want 401", r.StatusCode)
	}
	g := newFixture(t, testConfig+"\nadmin:\n  loopback_scopes: [check]\n")
	if r := g.do(t, "POST", "/v1/check", `{"user":"u"}`, none); r.StatusCode != 200 {
		t.Errorf("a check from loopback granted check: %d", r.StatusCode)
	}
	if r := g.do(t, "GET", "/metrics", "", none); r.StatusCode != 401 {
		t.Errorf("metrics from loopback granted only check: %d, want 401", r.StatusCode)
	}
}

func TestAdminListenerIsLoopbackByDefault(t *testing.T) {
	cfg, err := config.Parse("x.yaml", []byte("plans:\n  p:\n    limits: [{name: l, algorithm: gcra, quantity: 1, window: 1s}]\ndefault_plan: p\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Admin.Listen != "127.0.0.1:9090" || cfg.Admin.LoopbackScopes != config.ScopeRead || len(cfg.Admin.Callers) != 0 {
		t.Errorf("admin defaults: %+v", cfg.Admin)
	}
	if cfg.Envoy.Listen != "" {
		t.Errorf("envoy without a section: %q", cfg.Envoy.Listen)
	}
	cfg, err = config.Parse("x.yaml", []byte("envoy:\n  rules: [r.yaml]\nplans:\n  p:\n    limits: [{name: l, algorithm: gcra, quantity: 1, window: 1s}]\ndefault_plan: p\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Envoy.Listen != "127.0.0.1:8081" {
		t.Errorf("envoy's default listener: %q", cfg.Envoy.Listen)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestTLSAndMutualTLS: the public listener speaks HTTPS; the admin listener
// requires a client certificate signed by admin.tls.client_ca_file and maps
// it to a caller by name. A client without a certificate, or with one from
// another CA, cannot even complete the handshake; a certificate of the
// right CA that names no caller is a stranger (401). A reload reads the
// certificate files again.
func TestTLSAndMutualTLS(t *testing.T) {
	ca, other := testpki.New(t, "sluice test CA"), testpki.New(t, "another CA")
	ca.Server(t, "server")
	billing := ca.Client(t, "billing.internal")
	nobody := ca.Client(t, "nobody.internal")
	forged := other.Client(t, "billing.internal")
	dir := ca.Dir
	file := filepath.Join(dir, "sluice.yaml")
	cfgText := testConfig + `
tls: {cert_file: server.pem, key_file: server-key.pem}
admin:
  tls: {cert_file: server.pem, key_file: server-key.pem, client_ca_file: ca.pem}
  loopback_scopes: [check]
  callers:
    - {name: billing, certificate: billing.internal, scopes: [check]}
`
	if err := os.WriteFile(file, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func() (*config.Config, error) { return config.Load(file) }
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)), Load: load,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: certs}}}
	}
	check := func(c *http.Client) (int, error) {
		resp, err := c.Post("https://"+addrs.admin+"/v1/check", "application/json", strings.NewReader(`{"user":"u"}`))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var d struct{ Allowed bool }
		json.NewDecoder(resp.Body).Decode(&d)
		return resp.StatusCode, nil
	}
	if code, err := check(client(billing)); err != nil || code != 200 {
		t.Errorf("billing's certificate: %d %v, want 200", code, err)
	}
	// Loopback grants check here, but not to a connection without a
	// certificate: mutual TLS refuses it in the handshake.
	if code, err := check(client()); err == nil {
		t.Errorf("no client certificate on the mutual-TLS listener: %d, want a failed handshake", code)
	}
	if code, err := check(client(forged)); err == nil {
		t.Errorf("a certificate from another CA: %d, want a failed handshake", code)
	}
	if code, err := check(client(nobody)); err != nil || code != 200 {
		// The right CA, no caller of that name: a stranger from loopback,
		// who holds loopback's check scope.
		t.Errorf("a certificate naming no caller, from loopback: %d %v", code, err)
	}
	// The public listener is HTTPS without client certificates.
	resp, err := client().Get("https://" + addrs.public + "/healthz")
	if err != nil {
		t.Fatalf("public HTTPS: %v", err)
	}
	resp.Body.Close()
	// A reload reads the files again: a new server certificate is served.
	renewed := ca.Server(t, "server")
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", addrs.public, &tls.Config{RootCAs: ca.Pool})
	if err != nil {
		t.Fatal(err)
	}
	served := conn.ConnectionState().PeerCertificates[0]
	conn.Close()
	want, _ := x509.ParseCertificate(renewed.Certificate[0])
	if !served.Equal(want) {
		t.Error("after a reload the public listener still serves the old certificate")
	}
}
