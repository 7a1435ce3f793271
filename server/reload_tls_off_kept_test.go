package server_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/server"
)

const keptTLSPlans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"

// waitServing waits until Serve has made its listeners (both are made
// before either serves), asking /healthz of the plain one at addr.
func waitServing(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listeners never served: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reloadEach writes each of texts to file in turn, reloading srv after
// each.
func reloadEach(t *testing.T, srv *server.Server, file string, texts ...string) {
	t.Helper()
	for _, text := range texts {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := srv.Reload(); err != nil {
			t.Fatalf("reload: %v", err)
		}
	}
}

// A reload that takes tls out leaves the running public listener serving
// the certificate of the last configuration in force that had one
// (docs/decisions.md), handshakes or none in between: one renewed by a
// reload is kept, not the one the listener started with, and the expiry
// series reports the one kept.
func TestAReloadThatDropsTLSKeepsTheRenewedCertificate(t *testing.T) {
	first, renewed := testpki.New(t, "first CA"), testpki.New(t, "renewed CA")
	first.Server(t, "srv")
	time.Sleep(1100 * time.Millisecond) // expiry series are in whole seconds
	renewedLeaf := leafOf(t, renewed.Server(t, "srv"))
	section := func(ca *testpki.CA) string {
		return "tls: {cert_file: " + ca.File("srv") + ", key_file: " + ca.KeyFile("srv") + "}\n"
	}
	srv, file := loadServer(t, t.TempDir(), section(first)+keptTLSPlans)
	addrs := serveOn(t, srv)
	waitServing(t, addrs.admin)
	reloadEach(t, srv, file, section(renewed)+keptTLSPlans, keptTLSPlans)

	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addrs.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v := parseMetrics(t, resp.Body)[expirySeries("public")]; v != float64(renewedLeaf.NotAfter.Unix()) {
		t.Errorf("after a reload that renewed the certificate and one that took tls out, %s = %v, want %d (the renewed certificate's)",
			expirySeries("public"), v, renewedLeaf.NotAfter.Unix())
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, first.File("ca")))
	roots.AddCert(readCert(t, renewed.File("ca")))
	conn, err := tls.Dial("tcp", addrs.public, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := conn.ConnectionState().PeerCertificates[0].Issuer.CommonName; got != "renewed CA" {
		t.Errorf("after a reload that renewed the certificate and one that took tls out, the listener serves the certificate of %q, "+
			"not the renewed one (of %q)", got, "renewed CA")
	}
}

// The same for the admin listener's client CAs: rotated by a reload (the
// old CA taken out), then admin.tls taken out by another, the listener
// keeps requiring the rotated CA: callers moved to the new CA are
// accepted, certificates of the CA taken out refused, and the
// admin-client-ca expiry series reports the new CA.
func TestAReloadThatDropsAdminTLSKeepsTheRotatedClientCA(t *testing.T) {
	server, oldCA := testpki.New(t, "server CA"), testpki.New(t, "old client CA")
	time.Sleep(1100 * time.Millisecond) // expiry series are in whole seconds
	newCA := testpki.New(t, "new client CA")
	server.Server(t, "admin")
	newCert, oldCert := newCA.Client(t, "prometheus"), oldCA.Client(t, "retired")
	section := func(clients *testpki.CA) string {
		return "admin:\n  tls: {cert_file: " + server.File("admin") + ", key_file: " + server.KeyFile("admin") +
			", client_ca_file: " + clients.File("ca") + "}\n"
	}
	srv, file := loadServer(t, t.TempDir(), section(oldCA)+keptTLSPlans)
	addrs := serveOn(t, srv)
	waitServing(t, addrs.public)
	reloadEach(t, srv, file, section(newCA)+keptTLSPlans, keptTLSPlans)

	client := func(cert tls.Certificate) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: server.Pool, MinVersion: tls.VersionTLS12,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }}}}
	}
	resp, err := client(newCert).Get("https://" + addrs.admin + "/metrics")
	if err != nil {
		t.Fatalf("a client certificate of the rotated (new) client CA, after a reload that took admin.tls out: %v "+
			"(the listener went back to the client CA the rotation took out)", err)
	}
	defer resp.Body.Close()
	want := readCert(t, newCA.File("ca")).NotAfter
	if v := parseMetrics(t, resp.Body)[expirySeries("admin-client-ca")]; v != float64(want.Unix()) {
		t.Errorf("after a client CA rotation and a reload that took admin.tls out, %s = %v, want %d (the new CA's)",
			expirySeries("admin-client-ca"), v, want.Unix())
	}
	if resp, err := client(oldCert).Get("https://" + addrs.admin + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("a client certificate of the client CA the rotation took out is accepted again after a reload that took admin.tls out")
	}
}
