package server_test

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
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

// A client certificate identifies its caller only while it is valid: once
// it expires, the connection its handshake opened before carries none of
// its scopes, as a new connection's handshake would fail.
func TestExpiredClientCertificateLosesItsScopesOnOpenConnections(t *testing.T) {
	ca := testpki.New(t, "CA")
	ca.Server(t, "server")
	expires := time.Now().Add(2 * time.Second)
	billing := ca.ClientUntil(t, "billing.internal", expires)
	file := filepath.Join(ca.Dir, "sluice.yaml")
	text := testConfig + `
admin:
  tls: {cert_file: server.pem, key_file: server-key.pem, client_ca_file: ca.pem}
  loopback_scopes: []
  callers:
    - {name: billing, certificate: billing.internal, scopes: [check]}
`
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{billing}}}}
	t.Cleanup(client.CloseIdleConnections)
	check := func() (code int, reused bool) {
		t.Helper()
		req, _ := http.NewRequest("POST", "https://"+addrs.admin+"/v1/check", strings.NewReader(`{"user":"u"}`))
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, reused
	}
	if code, _ := check(); code != 200 {
		t.Fatalf("billing's certificate, valid: %d, want 200", code)
	}
	time.Sleep(time.Until(expires) + 1100*time.Millisecond) // x509 validity has whole seconds
	code, reused := check()
	if !reused {
		t.Fatal("the client opened a new connection: the test needs the one verified before the certificate expired")
	}
	if code != 401 {
		t.Errorf("billing's expired certificate, on the connection it opened while valid: %d, want 401", code)
	}
}
