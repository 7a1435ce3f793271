package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// A connection that takes longer to make than its caller's deadline is
// made all the same, in the background, and handed to the next caller at
// once; no more than dialsPerAddr dials run at once, and a dial's error
// reaches the callers waiting for it.
func TestAConnectorMakesConnectionsInTheBackground(t *testing.T) {
	var running, most, dials atomic.Int64
	release := make(chan error)
	c := newConnector(func(ctx context.Context, _ string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
		dials.Add(1)
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		select {
		case err := <-release:
			if err != nil {
				return nil, err
			}
		case <-ctx.Done(): // the connector closed
			return nil, ctx.Err()
		}
		a, b := net.Pipe()
		b.Close()
		return a, nil
	})
	t.Cleanup(c.close) // ends the dials left and closes the connections kept
	const addr = "redis:6379"
	d := &net.Dialer{Timeout: time.Second}
	dial := func(timeout time.Duration) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return c.DialCtx(ctx, addr, d, nil)
	}
	state := func() (running, kept int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.addrs[addr].running, len(c.addrs[addr].parked)
	}

	for range 2 * dialsPerAddr {
		if _, err := dial(5 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a call whose dial outlasts its deadline returned %v, want a deadline exceeded", err)
		}
	}
	if n, _ := state(); n != dialsPerAddr {
		t.Errorf("%d dials started by %d calls, want at most %d at once", n, 2*dialsPerAddr, dialsPerAddr)
	}
	waitUntil(t, func() bool { return dials.Load() == dialsPerAddr })
	release <- nil // one dial ends after its caller gave up
	waitUntil(t, func() bool { _, kept := state(); return kept == 1 })
	start := time.Now()
	conn, err := dial(time.Second)
	if err != nil {
		t.Fatalf("the next call did not get the connection made meanwhile: %v", err)
	}
	conn.Close()
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("the next call took %v to get the connection already made", took)
	}
	if n := dials.Load(); n != dialsPerAddr {
		t.Errorf("the call that got the connection made meanwhile started a dial (%d in all)", n)
	}

	failed := make(chan error, 1)
	go func() { _, err := dial(10 * time.Second); failed <- err }()
	// The caller starts a dial in the place of the one that ended, then
	// waits for the dials under way.
	waitUntil(t, func() bool { return dials.Load() == dialsPerAddr+1 })
	refused := errors.New("connection refused")
	release <- refused
	select {
	case err := <-failed:
		if !errors.Is(err, refused) {
			t.Errorf("a caller waiting for a dial that failed got %v, want its error", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a caller waiting for a dial that failed still waits 5 s later")
	}
	if m := most.Load(); m > dialsPerAddr {
		t.Errorf("%d dials ran at once, want at most %d", m, dialsPerAddr)
	}
}

// waitUntil fails t unless ok becomes true within 5 s.
func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not within 5 s")
		}
	}
}

// Closing a connector abandons its dials under way, closes the connection
// it keeps and refuses later dials: when close returns, none of its dials
// runs, and the call that waited for one is told the connector closed.
func TestAClosedConnectorMakesAndKeepsNoConnection(t *testing.T) {
	var running, dials atomic.Int64
	release := make(chan struct{})
	server := make(chan net.Conn, 1) // Redis's end of the connection kept
	c := newConnector(func(ctx context.Context, dst string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
		dials.Add(1)
		running.Add(1)
		defer running.Add(-1)
		if dst == "slow:6379" { // a handshake that never ends
			<-ctx.Done()
			return nil, ctx.Err()
		}
		<-release
		a, b := net.Pipe()
		server <- b
		return a, nil
	})
	d := &net.Dialer{Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if _, err := c.DialCtx(ctx, "late:6379", d, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call whose dial outlasts its deadline returned %v, want a deadline exceeded", err)
	}
	close(release) // the dial ends after its caller gave up: its connection is kept
	waitUntil(t, func() bool { return running.Load() == 0 })
	waiting := make(chan error, 1)
	go func() { _, err := c.DialCtx(context.Background(), "slow:6379", d, nil); waiting <- err }()
	waitUntil(t, func() bool { return running.Load() == 1 })

	c.close()
	if n := running.Load(); n != 0 {
		t.Errorf("%d dials still run after close returned", n)
	}
	select {
	case err := <-waiting:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("the call waiting for a dial got %v, want an error wrapping net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the call waiting for a dial still waits 5 s after close")
	}
	b := <-server
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := b.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the connection kept was not closed by close: reading its other end returned %v", err)
	}
	before := dials.Load()
	if _, err := c.DialCtx(context.Background(), "late:6379", d, nil); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a dial after close returned %v, want an error wrapping net.ErrClosed", err)
	}
	if dials.Load() != before {
		t.Error("a dial after close started a dial")
	}
	c.close() // idempotent
}
