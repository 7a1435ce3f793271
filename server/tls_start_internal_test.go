package server

import (
	"crypto/tls"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/memory"
)

// A listener that Serve starts with TLS, deciding so on the configuration
// in force, serves the TLS of the last configuration in force that had
// some even when a reload took tls out before the listener made its TLS
// configuration (listenerTLS): its handshakes do not all fail.
func TestAListenerStartedAfterAReloadDroppedTLSServesTheLastCertificate(t *testing.T) {
	ca := testpki.New(t, "start window CA")
	leaf := ca.Server(t, "srv")
	plans := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tls: {cert_file: " + ca.File("srv") + ", key_file: " + ca.KeyFile("srv") + "}\n" + plans)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	s, err := New(Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	if s.state.Load().publicTLS == nil {
		t.Fatal("the configuration started with has no public TLS")
	}
	write(plans) // Serve has decided the public listener speaks TLS
	if err := s.Reload(); err != nil {
		t.Fatalf("reload: %v", err)
	}
	c := s.listenerTLS(func(st *state) *tls.Config { return st.publicTLS })
	served, err := c.GetConfigForClient(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatalf("a listener made after a reload that took tls out refuses its handshakes: %v", err)
	}
	if len(served.Certificates) == 0 || string(served.Certificates[0].Certificate[0]) != string(leaf.Certificate[0]) {
		t.Errorf("the listener serves %d certificates, not the one of the configuration it started on", len(served.Certificates))
	}
	if got := s.tlsListeners.served(usePublic, s.state.Load()); len(got) != 1 || got[0].config != served {
		t.Errorf("the expiry metric reads %d configurations of the public listener, want the one it serves", len(got))
	}
}
