package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// A connection DialCtx returns is closed at the deadline of the call it
// was made for unless it has read a reply by then: a HELLO Redis does not
// answer in time holds no call waiting for that connection past it, and a
// connection that answered is never closed for it.
func TestAConnectionUnansweredByItsCallersDeadlineIsClosed(t *testing.T) {
	servers := make(chan net.Conn, 2)
	c := newConnector(func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error) {
		a, b := net.Pipe()
		servers <- b
		return a, nil
	})
	t.Cleanup(c.close)
	d := &net.Dialer{Timeout: time.Second}
	dial := func() (net.Conn, net.Conn) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		conn, err := c.DialCtx(ctx, "redis:6379", d, nil)
		if err != nil {
			t.Fatal(err)
		}
		return conn, <-servers
	}

	silent, _ := dial()
	silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, err := silent.Read(make([]byte, 1))
	if !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("reading a connection that got no reply returned %v, want it closed at its caller's deadline", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("a connection that got no reply was closed after %v, its caller's deadline being 50 ms", took)
	}

	answered, server := dial()
	go server.Write([]byte("+OK\r\n"))
	if _, err := answered.Read(make([]byte, 5)); err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // past the caller's deadline
	go server.Write([]byte("+OK\r\n"))
	answered.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := answered.Read(make([]byte, 5)); err != nil {
		t.Errorf("a connection that answered before its caller's deadline failed after it: %v", err)
	}
	answered.Close()
}
