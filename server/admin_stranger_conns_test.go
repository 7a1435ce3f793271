package server

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
)

// strangerConnsConfig: one caller (token strangerConnsToken), loopback
// granting nothing (so a loopback peer without a token is a stranger), two
// connections per listener.
const strangerConnsConfig = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
admin:
  loopback_scopes: []
  callers:
    - {name: tests, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [read, check, override_plan, admin]}
connections: {max: 2}
`

const strangerConnsToken = "test-token"

// newServerOf returns a Server of the configuration text yaml, closed
// with the test.
func newServerOf(t *testing.T, yaml string) *Server {
	t.Helper()
	cfg, err := config.Parse("sluice.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return newServerWith(t, cfg, io.Discard)
}

// newServerWith returns a Server of cfg logging to logs, closed with the
// test.
func newServerWith(t *testing.T, cfg *config.Config, logs io.Writer) *Server {
	t.Helper()
	st := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { st.Close() })
	s, err := New(Options{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// serveAdminOf serves s's admin listener as Serve does (httpListener),
// reporting on states the client's address of each connection that goes
// idle or closes.
func serveAdminOf(t *testing.T, s *Server) (addr string, states chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hl := s.httpListener("admin", s.admin, ln, false, nil)
	states = make(chan string, 64)
	inner := hl.srv.ConnState
	hl.srv.ConnState = func(c net.Conn, cs http.ConnState) {
		inner(c, cs)
		if cs == http.StateIdle || cs == http.StateClosed {
			states <- c.RemoteAddr().String()
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); hl.serve() }()
	t.Cleanup(func() { hl.srv.Close(); <-done })
	return ln.Addr().String(), states
}

// getOn sends GET path on c (with token as Sluice-Token unless "") and
// reads its answer.
func getOn(t *testing.T, c net.Conn, br *bufio.Reader, path, token string) *http.Response {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	extra := ""
	if token != "" {
		extra = TokenHeader + ": " + token + "\r\n"
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", path, extra)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.SetDeadline(time.Time{})
	return resp
}

// waitIdleOrClosed waits until the connection from local has reported idle
// or closed on states.
func waitIdleOrClosed(t *testing.T, states chan string, local string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case a := <-states:
			if a == local {
				return
			}
		case <-timeout:
			t.Fatalf("the connection from %s never went idle", local)
		}
	}
}

// On the admin listener a connection is a caller's once a request on it
// proves its caller; a stranger's request answered without credentials —
// an endpoint that needs no scope (/healthz), a path that is no endpoint
// (404), a method it does not serve (405), a path it redirects to its
// clean form (307) — leaves its keep-alive a stranger's. At
// connections.max, a connection that arrives closes that stranger's before
// a caller's keep-alive idle longer: "a caller's connection outlives
// strangers that come and go" (docs/decisions.md, "Connections are bounded
// per listener").
func TestAStrangersAnsweredKeepAliveIsClosedBeforeACallers(t *testing.T) {
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/healthz", http.StatusOK},
		{"/no-such-endpoint", http.StatusNotFound},
		{"/v1/check", http.StatusMethodNotAllowed},
		{"/./healthz", http.StatusTemporaryRedirect},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.path), func(t *testing.T) {
			addr, states := serveAdminOf(t, newServerOf(t, strangerConnsConfig))

			caller, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer caller.Close()
			if resp := getOn(t, caller, bufio.NewReader(caller), "/v1/degradation", strangerConnsToken); resp.StatusCode != http.StatusOK {
				t.Fatalf("the caller's request: %d", resp.StatusCode)
			}
			waitIdleOrClosed(t, states, caller.LocalAddr().String())

			stranger, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer stranger.Close()
			resp := getOn(t, stranger, bufio.NewReader(stranger), tc.path, "")
			if resp.StatusCode != tc.status {
				t.Fatalf("the stranger's GET %s: %d, want %d", tc.path, resp.StatusCode, tc.status)
			}
			waitIdleOrClosed(t, states, stranger.LocalAddr().String())

			// Another connection arrives at the full listener: one of the
			// two open ones is closed for it.
			third, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer third.Close()
			closed := make(chan string, 2)
			watch := func(name string, c net.Conn) {
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				io.Copy(io.Discard, c)
				closed <- name
			}
			go watch("caller", caller)
			go watch("stranger", stranger)
			if first := <-closed; first != "stranger" {
				t.Errorf("at connections.max, a new connection closed the %s's keep-alive first, idle longer than that of a stranger who had asked GET %s without credentials; want the stranger's closed", first, tc.path)
			}
		})
	}
}
