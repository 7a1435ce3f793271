package server_test

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// Each connection a stranger opens to a TLS listener and closes (or fills
// with garbage) before its handshake ends makes the HTTP server log an
// error: those lines are bounded, ten a second, and the rest counted in a
// line a second, so that opening connections cannot flood the log.
func TestServerErrorLinesAreBounded(t *testing.T) {
	ca := testpki.New(t, "sluice test CA")
	ca.Server(t, "server")
	file := filepath.Join(ca.Dir, "sluice.yaml")
	if err := os.WriteFile(file, []byte(testConfig+"tls: {cert_file: server.pem, key_file: server-key.pem}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var logs realtest.Buffer
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	const conns = 60
	start := time.Now()
	for range conns {
		c, err := net.Dial("tcp", addrs.public)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "\x16\x03\x01\x00\x05hello") // a handshake record that is no ClientHello
		c.Close()
	}
	most := 10 * (int(time.Since(start)/time.Second) + 2) // the burst may span two seconds
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "server errors not logged") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	lines := strings.Count(logs.String(), "TLS handshake error")
	if lines == 0 || lines > most {
		t.Errorf("%d connections that failed their handshake made %d log lines, want 1 to %d:\n%s", conns, lines, most, logs.String())
	}
	if !strings.Contains(logs.String(), "server errors not logged") {
		t.Errorf("no line counts the errors left out:\n%s", logs.String())
	}
}
