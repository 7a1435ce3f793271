package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

// A connector holds state for an address only while it has a dial under
// way, a connection kept or a call waiting there: a Cluster whose nodes
// move (failovers, rescheduled pods) is dialled at ever new addresses, and
// the connector's table must not grow with every address it ever dialled.
func TestAConnectorForgetsAddressesItNoLongerDials(t *testing.T) {
	const n = 1000
	refused := errors.New("connection refused")
	release := make(chan struct{})
	c := newConnector(func(ctx context.Context, dst string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
		if dst[0] == 'r' { // refused at once
			return nil, refused
		}
		select { // made after its caller gave up, then kept
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		a, b := net.Pipe()
		b.Close()
		return a, nil
	})
	c.park = 20 * time.Millisecond
	t.Cleanup(c.close)
	entries := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.addrs)
	}
	d := &net.Dialer{Timeout: time.Second}

	for i := range n {
		if _, err := c.DialCtx(context.Background(), fmt.Sprintf("refused-%d:6379", i), d, nil); !errors.Is(err, refused) {
			t.Fatalf("a refused dial returned %v, want its error", err)
		}
	}
	if got := entries(); got != 0 {
		t.Errorf("%d addresses held after %d dials refused, want none", got, n)
	}

	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), time.Microsecond)
		if _, err := c.DialCtx(ctx, fmt.Sprintf("late-%d:6379", i), d, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a call whose dial outlasts its deadline returned %v, want a deadline exceeded", err)
		}
		cancel()
	}
	close(release) // every dial ends after its caller gave up: its connection is kept for c.park
	deadline := time.Now().Add(5 * time.Second)
	for entries() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := entries(); got != 0 {
		t.Errorf("%d addresses held 5 s after the last of %d connections kept for %v was closed, want none", got, n, c.park)
	}

	// An address still in use keeps its state: the connection kept there
	// is handed to the next call.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if conn, err := c.DialCtx(ctx, "late-0:6379", d, nil); err != nil {
		t.Errorf("a dial after the addresses were forgotten returned %v", err)
	} else {
		conn.Close()
	}
	if got := entries(); got != 0 {
		t.Errorf("%d addresses held after a connection was handed to its call, want none", got)
	}
}
