package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// A connection finished while its only waiting call was giving up (its
// deadline came as the dial ended) is taken by no call: it waits idle for
// the next, exactly as one finished after the call left, and is handed to
// it as kept. When Redis closed it while it waited (idle timeout, CLIENT
// KILL, a restart), the call's failure wraps errKeptLost and the call is
// sent again, rather than failing on a Redis that is up.
func TestAConnectionItsWaiterLeftIsHandedOnAsKept(t *testing.T) {
	var mu sync.Mutex
	var servers []net.Conn
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	c := newConnector(func(ctx context.Context, _ string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		client, server := net.Pipe()
		mu.Lock()
		servers = append(servers, server)
		mu.Unlock()
		return client, nil
	})
	defer c.close()
	d := &net.Dialer{Timeout: 10 * time.Second}
	const dst = "redis:6379"

	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	first := make(chan error, 1)
	go func() {
		conn, err := c.DialCtx(ctx1, dst, d, nil)
		if conn != nil {
			conn.Close()
		}
		first <- err
	}()
	<-started

	// The dial ends as its caller gives up: the dial's goroutine parks the
	// connection while the caller is still in DialCtx, on its way out.
	c.mu.Lock()
	close(release)
	time.Sleep(50 * time.Millisecond) // the dial done, waiting for c.mu
	cancel1()
	time.Sleep(50 * time.Millisecond) // the caller gave up, waiting for c.mu
	c.mu.Unlock()
	if err := <-first; err == nil {
		t.Fatal("the first caller got the connection: scenario not reached")
	}

	// The connection now waits idle; Redis closes it.
	mu.Lock()
	if len(servers) != 1 {
		mu.Unlock()
		t.Fatalf("%d connections made, want 1", len(servers))
	}
	servers[0].Close()
	mu.Unlock()

	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	conn, err := c.DialCtx(ctx2, dst, d, nil)
	if err != nil {
		t.Fatalf("the next call got no connection: %v", err)
	}
	defer conn.Close()
	_, err = conn.Write([]byte("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")) // HELLO 3
	if err == nil {
		_, err = conn.Read(make([]byte, 64))
	}
	if !errors.Is(err, errKeptLost) || !unsent(ctx2, err) {
		t.Errorf("the idle connection, closed by Redis before HELLO's answer, failed its call with %v: "+
			"not errKeptLost, so the call is not sent again and fails on a Redis that is up", err)
	}
}
