package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A connection that arrives while every connection is busy waits, and is
// let in as soon as one goes idle (which is closed for it), not when one
// closes: "a connection that arrives closes an idle one …, so connections
// held open cannot lock new clients out" (docs/decisions.md). Keep-alive
// clients that go on reusing their connections would otherwise keep it,
// and the backlog behind it, out until idle_timeout.
func TestAWaitingConnectionIsLetInWhenOneGoesIdle(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 2)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-release
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(up.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+`
plans:
  anonymous:
    limits: [{name: m, algorithm: fixed-window, quantity: 1000, window: 1m}]
anonymous_plan: anonymous
connections: {max: 2, idle_timeout: 2m}
`)
	l := serveOn(t, srv)

	type kc struct {
		c  net.Conn
		br *bufio.Reader
	}
	dial := func() kc {
		c, err := net.Dial("tcp", l.public)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return kc{c, bufio.NewReader(c)}
	}
	send := func(k kc, path string) {
		fmt.Fprintf(k.c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	}
	read := func(k kc, within time.Duration) (int, error) {
		k.c.SetReadDeadline(time.Now().Add(within))
		resp, err := http.ReadResponse(k.br, nil)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// Two keep-alive clients, each in a request the upstream holds.
	a, b := dial(), dial()
	send(a, "/slow")
	send(b, "/slow")
	<-arrived // both requests reach the upstream: both connections busy
	<-arrived
	// A third client arrives at the bound: none is idle, so it waits.
	c := dial()
	send(c, "/fast")
	// Give the server time to accept it (and find none idle); if it were
	// accepted only after the release, the test could only pass.
	time.Sleep(500 * time.Millisecond)
	// The busy ones finish and sit idle on keep-alive.
	close(release)
	for _, k := range []kc{a, b} {
		if st, err := read(k, 10*time.Second); err != nil || st != 200 {
			t.Fatalf("a busy client's answer: %d, %v", st, err)
		}
	}
	// Now two connections are idle and one waits: the waiting one should
	// be let in (by closing the connection idle the longest).
	if st, err := read(c, 5*time.Second); err != nil || st != 200 {
		t.Errorf("the waiting client: %d, %v; want 200 promptly: two connections have been idle since, yet it waits for one to close (idle_timeout, 2m)", st, err)
	}
}
