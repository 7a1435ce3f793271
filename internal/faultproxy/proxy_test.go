package faultproxy_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/internal/faultproxy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo starts a line echo server and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

func newProxy(t *testing.T) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// roundTrip writes a line and reads it back, returning how long it took.
func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if line != "ping\n" {
		t.Fatalf("echoed %q", line)
	}
	return time.Since(start), nil
}

func TestForwardsAndAddsLatencyBothWays(t *testing.T) {
	p := newProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	// 200 ms each way: a round trip takes 400 ms at least, less than 700
	// (twice each way would be 800), and one without latency less than
	// 200 ms, margins a loaded machine's delays fit in.
	if d, err := roundTrip(t, c, r); err != nil || d >= 200*time.Millisecond {
		t.Fatalf("plain round trip: %v, %v", d, err)
	}
	p.SetLatency(200 * time.Millisecond)
	if d, err := roundTrip(t, c, r); err != nil || d < 400*time.Millisecond || d >= 700*time.Millisecond {
		t.Fatalf("round trip with 200ms each way: %v, %v (want about 400ms)", d, err)
	}
	p.SetLatency(0)
	if d, err := roundTrip(t, c, r); err != nil || d >= 200*time.Millisecond {
		t.Fatalf("round trip after the latency is removed: %v, %v", d, err)
	}
	if st := p.Stats(); st.Accepted != 1 || st.Open != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestResetAllResetsOpenConnections(t *testing.T) {
	p := newProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := roundTrip(t, c, r); err != nil {
		t.Fatal(err)
	}
	if n := p.ResetAll(); n != 1 {
		t.Fatalf("reset %d connections, want 1", n)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadByte(); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read after ResetAll: %v, want ECONNRESET", err)
	}
	// New connections still work.
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := roundTrip(t, c2, bufio.NewReader(c2)); err != nil {
		t.Fatalf("new connection after ResetAll: %v", err)
	}
	if st := p.Stats(); st.Reset != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestRefuseNewResetsArrivals(t *testing.T) {
	p := newProxy(t)
	p.RefuseNew(true)
	// The kernel completes the handshake and the proxy resets at once:
	// the dial itself, or the first read, fails.
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		_, err = roundTrip(t, c, bufio.NewReader(c))
		c.Close()
		if err == nil {
			t.Fatal("a refused connection answered")
		}
	}
	p.RefuseNew(false)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(t, c, bufio.NewReader(c)); err != nil {
		t.Fatalf("after RefuseNew(false): %v", err)
	}
	if st := p.Stats(); st.Refused != 1 || st.Accepted != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	p, err := faultproxy.New(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.SetLatency(time.Hour) // a chunk waits in the proxy
	c.Write([]byte("stuck\n"))
	time.Sleep(20 * time.Millisecond)
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return with a chunk waiting")
	}
	if _, err := net.Dial("tcp", p.Addr()); err == nil {
		t.Error("a closed proxy accepts")
	}
	p.Close() // idempotent
}

// TestHalfCloseKeepsTheOtherWay: a client that ends its sending (a TCP
// half-close) still receives what the server answers, delayed or not, and
// then the server's end.
func TestHalfCloseKeepsTheOtherWay(t *testing.T) {
	for _, latency := range []time.Duration{0, 100 * time.Millisecond} {
		p := newProxy(t)
		p.SetLatency(latency)
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("ping\n")); err != nil {
			t.Fatal(err)
		}
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(c)
		c.Close()
		if string(got) != "ping\n" || err != nil {
			t.Errorf("latency %v: after a half-close the client read %q, %v; want the echo and the end", latency, got, err)
		}
	}
}
