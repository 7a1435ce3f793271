package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// An admin listener with admin.tls and a client_ca_file refuses every
// handshake without a client certificate its CA signed, /readyz included:
// healthcheck presents -cert and -key, and says what failed without them.
func TestHealthcheckPresentsAClientCertificate(t *testing.T) {
	ca := testpki.New(t, "admin CA")
	serverCert := ca.Server(t, "127.0.0.1")
	ca.Client(t, "probe.internal")
	pem, err := os.ReadFile(ca.File("ca"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ready\n")) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	t.Cleanup(srv.Close)
	check := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"healthcheck"}, append(args, srv.URL+"/readyz")...), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := check("-cacert", ca.File("ca"), "-cert", ca.File("probe.internal"), "-key", ca.KeyFile("probe.internal")); code != 0 || !strings.Contains(out, "200 OK") {
		t.Errorf("with the client certificate: exit %d, %q; want 0 and 200 OK", code, out)
	}
	if code, out := check("-cacert", ca.File("ca")); code != 1 {
		t.Errorf("without a client certificate: exit %d, %q; want 1", code, out)
	}
	if code, out := check("-cacert", ca.File("ca"), "-cert", ca.File("probe.internal")); code != 2 || !strings.Contains(out, "-cert and -key go together") {
		t.Errorf("-cert without -key: exit %d, %q; want 2 saying they go together", code, out)
	}
}
