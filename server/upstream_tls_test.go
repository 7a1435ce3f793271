package server_test

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// An https upstream with a private CA that asks for a client certificate:
// upstream_tls names the CA and sluice's certificate, and admitted
// requests reach it; without the client certificate, or trusting only the
// system's roots, the upstream cannot be reached (502).
func TestUpstreamOverMutualTLS(t *testing.T) {
	ca := testpki.New(t, "upstream CA")
	ca.Client(t, "sluice")
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "upstream saw "+r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	up.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "upstream")}, ClientCAs: ca.Pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	up.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes below
	up.StartTLS()
	t.Cleanup(up.Close)

	serve := func(upstreamTLS string) string {
		t.Helper()
		srv, _ := loadServer(t, ca.Dir, "upstream: "+up.URL+"\n"+upstreamTLS+`
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
anonymous_plan: anonymous
`)
		front := httptest.NewServer(srv.PublicHandler())
		t.Cleanup(front.Close)
		resp, err := http.Get(front.URL + "/v1/items")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(b)
	}
	if got := serve("upstream_tls: {ca_file: ca.pem, cert_file: sluice.pem, key_file: sluice-key.pem}"); got != "200 OK upstream saw sluice" {
		t.Errorf("with the CA and the client certificate: %q", got)
	}
	for _, tls := range []string{"upstream_tls: {ca_file: ca.pem}", ""} {
		if got := serve(tls); !strings.HasPrefix(got, "502 ") {
			t.Errorf("%q: %q, want a 502", tls, got)
		}
	}
	if _, err := config.Parse("x.yaml", []byte("upstream_tls: {server_name: api.internal}\nupstream: http://api.internal\n"+
		"plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 1, window: 1m}]}\n")); err == nil ||
		!strings.Contains(err.Error(), "x.yaml:1:") || !strings.Contains(err.Error(), "needs an https:// upstream") {
		t.Errorf("upstream_tls with an http upstream: %v", err)
	}
}
