package server

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// A Config built in Go without a connections section is served with the
// bounds a configuration file that leaves the section out gets
// (config.Connections: "Zero values are replaced by the defaults"), but
// StreamIdleTimeout, whose zero bounds no stream's silence: its listeners
// hold connections.max connections, not none (a listener of no slot would
// accept none, and the server answer nothing), and time requests out. New
// leaves the caller's Config as it was.
func TestAConfigBuiltInGoWithoutConnectionsIsServedWithTheDefaults(t *testing.T) {
	file, err := config.Parse("sluice.yaml", []byte(`
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("sluice.yaml", []byte(strangerConnsConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Connections = config.Connections{} // as a Config built in Go leaves it
	s := newServerWith(t, cfg, io.Discard)
	want := file.Connections
	want.StreamIdleTimeout = 0
	if got := s.Config().Connections; got != want {
		t.Errorf("served with connections %+v, want the defaults %+v", got, want)
	}
	if cfg.Connections != (config.Connections{}) {
		t.Errorf("New changed the caller's Config: its connections are %+v", cfg.Connections)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hl := s.httpListener("admin", s.admin, ln, false, nil)
	done := make(chan struct{})
	go func() { defer close(done); hl.serve() }()
	t.Cleanup(func() { hl.srv.Close(); ln.Close(); <-done })
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz on a server whose Config was built in Go without connections: %v; want it served", err)
	}
	resp.Body.Close()
}
