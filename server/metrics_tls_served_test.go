package server_test

import (
	"crypto/tls"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// A reload that takes tls or admin.tls out leaves the running listener
// serving HTTPS with the certificate, and the client CAs, it had until
// the next start (TestReloadThatDropsTLSKeepsTheRunningListenerServing).
// sluice_tls_certificate_expiry_timestamp_seconds reports, for public and
// admin, the certificate the listener serves, and for admin-client-ca the
// CAs it enforces: their series stay until the restart, so that
// SluiceCertificateExpiresSoon still fires for a certificate clients are
// handed.
func TestCertificateExpiryOfACertificateStillServedAfterAReloadDropsTLS(t *testing.T) {
	ca := testpki.New(t, "served expiry CA")
	served := leafOf(t, ca.Server(t, "srv"))
	scraper := ca.Client(t, "prometheus")
	caCert := readCert(t, ca.File("ca"))
	plans := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	files := "cert_file: " + ca.File("srv") + ", key_file: " + ca.KeyFile("srv")
	for _, c := range []struct {
		name, section string
		want          map[string]time.Time
	}{
		{"public", "tls: {" + files + "}\n", map[string]time.Time{"public": served.NotAfter}},
		{"admin", "admin:\n  tls: {" + files + ", client_ca_file: " + ca.File("ca") + "}\n",
			map[string]time.Time{"admin": served.NotAfter, "admin-client-ca": caCert.NotAfter}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, file := loadServer(t, t.TempDir(), c.section+plans)
			addrs := serveOn(t, srv)
			scheme := "http://"
			if c.name == "admin" {
				scheme = "https://"
			}
			client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
				TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{scraper}, MinVersion: tls.VersionTLS12}}}
			scrape := func() map[string]float64 {
				t.Helper()
				resp, err := client.Get(scheme + addrs.admin + "/metrics")
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				return parseMetrics(t, resp.Body)
			}
			for use, want := range c.want {
				if v := scrape()[expirySeries(use)]; v != float64(want.Unix()) {
					t.Fatalf("before the reload: %s = %v, want %d", expirySeries(use), v, want.Unix())
				}
			}
			if err := os.WriteFile(file, []byte(plans), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := srv.Reload(); err != nil {
				t.Fatalf("reload: %v", err)
			}
			got := scrape() // the admin listener's over the TLS it still serves
			for use, want := range c.want {
				if v, ok := got[expirySeries(use)]; !ok || v != float64(want.Unix()) {
					t.Errorf("after a reload that drops the listener's TLS, which it keeps serving until the next start: %s = %v (exported: %v), want %d (%s)",
						expirySeries(use), v, ok, want.Unix(), want.UTC())
				}
			}
		})
	}
}

// A reload that adds tls leaves the running public listener speaking plain
// HTTP until the next start: it serves no certificate, so none has an
// expiry to report (an alert on it would be about a certificate no client
// is handed yet).
func TestCertificateExpiryOfAListenerThatGainsTLSOnlyAtTheNextStart(t *testing.T) {
	ca := testpki.New(t, "gained expiry CA")
	ca.Server(t, "srv")
	plans := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	srv, file := loadServer(t, t.TempDir(), plans)
	addrs := serveOn(t, srv)
	// Serve starts its listeners in the background: a reload before it
	// did would start the public one with TLS.
	plainHealthz := func(when string) {
		t.Helper()
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addrs.public + "/healthz")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: plain HTTP answered %s", when, resp.Status)
		}
	}
	plainHealthz("before the reload")
	if err := os.WriteFile(file, []byte("tls: {cert_file: "+ca.File("srv")+", key_file: "+ca.KeyFile("srv")+"}\n"+plans), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.Reload(); err != nil {
		t.Fatalf("reload: %v", err)
	}
	plainHealthz("after a reload that adds tls, the public listener no longer speaks plain HTTP")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addrs.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v, ok := parseMetrics(t, resp.Body)[expirySeries("public")]; ok {
		t.Errorf("the public listener serves no certificate until the next start, but %s = %v", expirySeries("public"), v)
	}
}
