package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// A handler that switched its connection to another protocol (Hijack) and
// waits on its request's context is ended by Serve's shutdown: the
// http.Server no longer knows the connection and never ends that context
// itself, so Serve ends it when it closes the switched connections, and
// the handler returns (giving back what it holds) before Serve does.
func TestShutdownEndsTheContextOfASwitchedConnectionsHandler(t *testing.T) {
	cfg, err := config.Parse("sluice.yaml", []byte(strangerConnsConfig+"shutdown: {drain: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := newServerWith(t, cfg, io.Discard)
	switched, returned := make(chan struct{}), make(chan struct{})
	release := make(chan struct{}) // ends the handler if Serve does not
	defer close(release)
	s.public = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
		rw.Flush()
		close(switched)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	pub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adm, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, Listeners{Public: pub, Admin: adm}) }()
	c, err := net.Dial("tcp", pub.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: sluice\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, " 101 ") {
		t.Fatalf("%q, %v", line, err)
	}
	select {
	case <-switched:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection did not switch")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	select {
	case <-returned:
	default:
		t.Error("Serve returned while the switched connection's handler still waited on its request's context")
	}
}
