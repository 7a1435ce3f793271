package server

import (
	"crypto/tls"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// Each line of the listeners' own errors is cut to maxLoggedLine bytes, as
// the refusal log cuts what a client chooses (docs/operations.md, "Logs"):
// a ClientHello whose ALPN extension offers only protocols the listener
// does not speak fails with Go's "tls: client requested unsupported
// application protocols (%q)", listing every protocol offered — up to
// 64 KiB of a stranger's bytes, who may open 10 such connections a second.
func TestServerErrorLinesAreCut(t *testing.T) {
	ca := testpki.New(t, "admin CA")
	ca.Server(t, "admin")
	cfg, err := config.Parse("sluice.yaml", []byte(strings.Replace(strangerConnsConfig, "admin:\n",
		"admin:\n  tls: {cert_file: "+ca.File("admin")+", key_file: "+ca.KeyFile("admin")+"}\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var logs realtest.Buffer
	s := newServerWith(t, cfg, &logs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hl := s.httpListener("admin", s.admin, ln, true, func(st *state) *tls.Config { return st.adminTLS })
	done := make(chan struct{})
	go func() { defer close(done); hl.serve() }()
	t.Cleanup(func() { hl.srv.Close(); <-done })

	// One stranger's handshake, offering 200 made-up protocols of 255
	// bytes each (51,000 bytes of ALPN).
	protos := make([]string, 200)
	for i := range protos {
		protos[i] = strings.Repeat(string(rune('a'+i%26)), 255)
	}
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool, NextProtos: protos, MinVersion: tls.VersionTLS12})
	if err == nil {
		c.Close()
		t.Fatal("the handshake succeeded; want it refused for its protocols")
	}

	var line string
	for deadline := time.Now().Add(10 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "TLS handshake error") {
				line = l
			}
		}
	}
	if line == "" {
		t.Fatal("no line logged of the failed handshake")
	}
	// The cut message, quoted, and the line's time and level.
	const bound = 2 * maxLoggedLine
	if len(line) > bound {
		t.Errorf("one failed handshake of a stranger wrote a log line of %d bytes (%.100q…); want at most %d", len(line), line, bound)
	}
}

// A line of a component's log.Logger that a boundedWarnings logs as
// another message's "err" (loggerAs: the reverse proxy's) is cut to
// maxLoggedLine bytes too, at a UTF-8 boundary, and marked cut with "…".
func TestComponentErrorLinesAreCut(t *testing.T) {
	var logs realtest.Buffer
	b := newBoundedWarnings(slog.New(slog.NewJSONHandler(&logs, nil)), "not logged")
	long := strings.Repeat("é", maxLoggedLine) // 2 bytes a rune
	b.loggerAs("upstream failed", "upstream", "up").Print(long)
	b.logger().Print(long)
	out := logs.String()
	want := strings.Repeat("é", maxLoggedLine/2) + "…"
	if got := strings.Count(out, want); got != 2 {
		t.Errorf("%d of 2 lines hold the line cut to %d bytes and …:\n%.300s", got, maxLoggedLine, out)
	}
	if strings.Contains(out, want[:len(want)-len("…")]+"é") {
		t.Errorf("a line was logged beyond %d bytes:\n%.300s", maxLoggedLine, out)
	}
}
