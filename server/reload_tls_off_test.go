package server_test

import (
	"crypto/tls"
	"os"
	"testing"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// Whether a listener speaks TLS changes at the next start (docs/decisions.md;
// the reload says so in its log): a reload that takes tls or admin.tls out
// leaves the running listener serving HTTPS with the certificate it had.
// The Envoy listener shares admin.tls and the same code (listenerTLS).
func TestReloadThatDropsTLSKeepsTheRunningListenerServing(t *testing.T) {
	ca := testpki.New(t, "s48 CA")
	ca.Server(t, "srv")
	plans := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	files := "{cert_file: " + ca.File("srv") + ", key_file: " + ca.KeyFile("srv") + "}"
	for _, c := range []struct{ name, section string }{
		{"public", "tls: " + files + "\n"},
		{"admin", "admin:\n  tls: " + files + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, file := loadServer(t, t.TempDir(), c.section+plans)
			addrs := serveOn(t, srv)
			addr := addrs.public
			if c.name == "admin" {
				addr = addrs.admin
			}
			dial := func() error {
				conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12})
				if err == nil {
					conn.Close()
				}
				return err
			}
			if err := dial(); err != nil {
				t.Fatalf("before the reload: %v", err)
			}
			if err := os.WriteFile(file, []byte(plans), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := srv.Reload(); err != nil {
				t.Fatalf("reload: %v", err)
			}
			if err := dial(); err != nil {
				t.Errorf("after a reload that drops the listener's TLS (which applies at the next start), the running HTTPS listener refuses every handshake: %v", err)
			}
		})
	}
}
