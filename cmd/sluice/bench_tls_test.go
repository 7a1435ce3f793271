package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// bench reaches an https URL whose certificate a private CA signs (an
// admin listener with admin.tls) with -cacert, and presents a client
// certificate with -cert and -key, as keys does; without -cacert every
// request fails verification.
func TestBenchTrustsAPrivateCA(t *testing.T) {
	ca := testpki.New(t, "bench CA")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "admin")}, ClientCAs: ca.Pool, ClientAuth: tls.VerifyClientCertIfGiven}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused without -cacert, about 2,000 in a second
	srv.StartTLS()
	defer srv.Close()
	ca.Client(t, "ops.internal")

	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "-d", "1s", "-c", "2", srv.URL}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "every request failed") {
		t.Errorf("without -cacert: exit %d, stderr %q; want every request to fail verification", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code := run(context.Background(), []string{"bench", "-d", "200ms", "-c", "2", "-cacert", ca.File("ca"),
		"-cert", ca.File("ops.internal"), "-key", ca.KeyFile("ops.internal"), srv.URL}, &out, &errOut)
	// The statuses line alone: the output also holds the URL, whose port
	// may read 401.
	var statuses []string // "200:", "1222", and so on for each status
	for line := range strings.Lines(out.String()) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "statuses" {
			statuses = f[1:]
		}
	}
	if code != 0 || len(statuses) != 2 || statuses[0] != "200:" {
		t.Errorf("with -cacert, -cert and -key: exit %d, statuses %q; want 0 and only 200s:\n%s\n%s", code, statuses, out.String(), errOut.String())
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"bench", "-cert", ca.File("ops.internal"), srv.URL}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "-cert and -key") {
		t.Errorf("-cert without -key: exit %d, stderr %q; want a usage error", code, errOut.String())
	}
}
