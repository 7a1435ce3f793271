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

// The expiry of a client certificate (redis-client, upstream-client) is
// that of the certificate the next connection presents. A certificate
// renewed with a new key whose key_file is left as it was (certbot makes a
// new key at each renewal; a key copied once elsewhere stays the old one)
// does not load: each handshake presents the last pair that did, the old
// certificate, until it expires and the server refuses every new
// connection. sluice_tls_certificate_unreadable is 1 for it, and the
// expiry is the old certificate's, not the unusable file's, so that an
// alert fires before the outage.
func TestClientCertificateExpiryIsTheOnePresented(t *testing.T) {
	plans := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, use := range []string{"redis-client", "upstream-client"} {
		t.Run(use, func(t *testing.T) {
			ca := testpki.New(t, "client expiry CA")
			old := leafOf(t, ca.ClientUntil(t, use, time.Now().Add(2*time.Hour)))
			files := "{ca_file: " + ca.File("ca") + ", cert_file: " + ca.File(use) + ", key_file: " + ca.KeyFile(use) + "}"
			section := "store:\n  type: redis\n  redis:\n    addresses: [\"127.0.0.1:1\"]\n    tls: " + files + "\n"
			if use == "upstream-client" {
				section = "upstream: https://127.0.0.1:1\nupstream_tls: " + files + "\n"
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "sluice.yaml")
			if err := os.WriteFile(file, []byte(section+plans), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			// What the client presents: the configuration OpenStore loads
			// for the Redis store (here, as sluice serve does, given to the
			// server as StoreClientCertificate), the upstream's loaded by
			// the server.
			clientTLS := cfg.UpstreamTLS
			if use == "redis-client" {
				clientTLS = cfg.Store.Redis.TLS
			}
			presents, err := clientTLS.Load()
			if err != nil {
				t.Fatal(err)
			}
			store := memory.New()
			t.Cleanup(func() { store.Close() })
			o := server.Options{Config: cfg, Store: store, Memory: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if use == "redis-client" {
				o.StoreClientCertificate = func() (*tls.Certificate, error) { return clientTLS.Presented(presents) }
			}
			srv, err := server.New(o)
			if err != nil {
				t.Fatal(err)
			}
			addrs := serveOn(t, srv)
			// The certificate renewed with a new key; the key file left as
			// it was.
			renewed := leafOf(t, ca.ClientUntil(t, "renewed", time.Now().Add(90*24*time.Hour)))
			pem, err := os.ReadFile(ca.File("renewed"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ca.File(use), pem, 0o600); err != nil {
				t.Fatal(err)
			}
			presented, err := presents.GetClientCertificate(&tls.CertificateRequestInfo{})
			if err != nil {
				t.Fatal(err)
			}
			if got := leafOf(t, *presented); !got.NotAfter.Equal(old.NotAfter) {
				t.Fatalf("the next handshake presents a certificate expiring %v, want the last that loaded, %v", got.NotAfter, old.NotAfter)
			}
			resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addrs.admin + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			m := parseMetrics(t, resp.Body)
			if v, ok := m[expirySeries(use)]; !ok || v != float64(old.NotAfter.Unix()) {
				t.Errorf("the next handshake presents the old certificate, expiring %v (in 2h), but %s = %v (exported: %v; the unusable file's is %v)",
					old.NotAfter.UTC(), expirySeries(use), v, ok, renewed.NotAfter.UTC())
			}
			unreadable := `sluice_tls_certificate_unreadable{use="` + use + `"}`
			if v := m[unreadable]; v != 1 {
				t.Errorf("with a certificate that does not go with its key, %s = %v, want 1", unreadable, v)
			}
		})
	}
}
