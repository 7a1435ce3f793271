package server_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// TestRenewedCertificateIsServedWithoutASignal: the public listener's
// certificate, mounted as Kubernetes mounts a Secret (tls.crt and tls.key
// are links through ..data to a timestamped folder, and a renewal swaps
// ..data), is served renewed once the folder is swapped, and again once a
// file is rewritten in place (as certbot does), with no SIGHUP and no
// change to the configuration file.
func TestRenewedCertificateIsServedWithoutASignal(t *testing.T) {
	ca := testpki.New(t, "renewal CA")
	mount := t.TempDir()
	version := func(name string) *x509.Certificate {
		t.Helper()
		c := ca.Server(t, "public")
		dir := filepath.Join(mount, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for from, to := range map[string]string{ca.File("public"): "tls.crt", ca.KeyFile("public"): "tls.key"} {
			b, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, to), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cert, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	link := func(target, name string) {
		t.Helper()
		tmp := filepath.Join(mount, name+".tmp")
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(mount, name)); err != nil {
			t.Fatal(err)
		}
	}
	first := version("..2026_12_01")
	link("..2026_12_01", "..data")
	link("..data/tls.crt", "tls.crt")
	link("..data/tls.key", "tls.key")

	srv, _ := loadServer(t, t.TempDir(), "tls: {cert_file: "+filepath.Join(mount, "tls.crt")+", key_file: "+filepath.Join(mount, "tls.key")+"}\n"+
		"plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n", true)
	addrs := serveOn(t, srv)
	served := func() *x509.Certificate {
		conn, err := tls.Dial("tcp", addrs.public, &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	waitFor := func(want *x509.Certificate, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !served().Equal(want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the listener still serves serial %v, want %v", what, served().SerialNumber, want.SerialNumber)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !served().Equal(first) {
		t.Fatal("the listener does not serve the mounted certificate")
	}
	waitFor(first, "start")

	second := version("..2026_12_02")
	link("..2026_12_02", "..data") // the Secret renewed: the link swapped
	waitFor(second, "after the Secret's folder was swapped")

	third := ca.Server(t, "public") // certbot: the files rewritten in place
	for from, to := range map[string]string{ca.File("public"): "tls.crt", ca.KeyFile("public"): "tls.key"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mount, "..2026_12_02", to), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := x509.ParseCertificate(third.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	waitFor(want, "after the files were rewritten")
}
