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

// A reload that replaces admin.tls.client_ca_file takes the certificates
// of the CA it removed from their callers on the connections they already
// hold, as on new ones (which fail their handshake): a kept-alive
// connection is identified by the configuration in force, not by the one
// its handshake was verified under.
func TestReloadedClientCAIdentifiesOpenConnections(t *testing.T) {
	ca, next := testpki.New(t, "old CA"), testpki.New(t, "new CA")
	ca.Server(t, "server")
	billing := ca.Client(t, "billing.internal")
	file := filepath.Join(ca.Dir, "sluice.yaml")
	write := func(clientCA string) {
		t.Helper()
		text := testConfig + `
admin:
  tls: {cert_file: server.pem, key_file: server-key.pem, client_ca_file: ` + clientCA + `}
  loopback_scopes: []
  callers:
    - {name: billing, certificate: billing.internal, scopes: [check]}
`
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(ca.File("ca"))
	load := func() (*config.Config, error) { return config.Load(file) }
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Load: load,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{billing}}}}
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
		t.Fatalf("billing's certificate: %d, want 200", code)
	}
	write(next.File("ca"))
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	code, reused := check()
	if !reused {
		t.Fatal("the client opened a new connection: the test needs the one verified before the reload")
	}
	if code != 401 {
		t.Errorf("billing's certificate, of a CA the configuration no longer trusts, on its open connection: %d, want 401", code)
	}
}
