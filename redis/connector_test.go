package redis

import (
	"context"
	"crypto/tls"
	"errors"
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
		if err := <-release; err != nil {
			return nil, err
		}
		a, b := net.Pipe()
		b.Close()
		return a, nil
	})
	d := &net.Dialer{Timeout: time.Second}
	dial := func(timeout time.Duration) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return c.DialCtx(ctx, "redis:6379", d, nil)
	}

	for range 2 * dialsPerAddr {
		if _, err := dial(5 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a call whose dial outlasts its deadline returned %v, want a deadline exceeded", err)
		}
	}
	if n := dials.Load(); n != dialsPerAddr {
		t.Errorf("%d dials started by %d calls, want at most %d at once", n, 2*dialsPerAddr, dialsPerAddr)
	}
	release <- nil // one dial ends after its caller gave up
	waitUntil(t, func() bool { return running.Load() == dialsPerAddr-1 })
	start := time.Now()
	conn, err := dial(time.Second)
	if err != nil {
		t.Fatalf("the next call did not get the connection made meanwhile: %v", err)
	}
	conn.Close()
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("the next call took %v to get the connection already made", took)
	}

	failed := make(chan error, 1)
	go func() { _, err := dial(10 * time.Second); failed <- err }()
	refused := errors.New("connection refused")
	time.Sleep(50 * time.Millisecond) // the caller waits for the dials under way
	release <- refused
	select {
	case err := <-failed:
		if !errors.Is(err, refused) {
			t.Errorf("a caller waiting for a dial that failed got %v, want its error", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a caller waiting for a dial that failed still waits 5 s later")
	}
	close(release) // the dials still under way end
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
