package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"
)

// A call with too little time left for its HELLO is not handed a kept
// connection, and fails: by its own deadline, which is what failed it.
// Returning at once, its context still live, the error read as the
// store's, so that a failover counted it and fed its breaker, and a
// caller whose deadline was short (Envoy's 20 ms) counted as a store down
// whenever a connection was being made.
func TestACallTooHastyForAKeptConnectionFailsByItsOwnDeadline(t *testing.T) {
	const took = 50 * time.Millisecond
	c := newConnector(func(ctx context.Context, _ string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
		select {
		case <-time.After(took):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		a, b := net.Pipe()
		b.Close()
		return a, nil
	})
	t.Cleanup(c.close)
	d := &net.Dialer{Timeout: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	_, err := c.DialCtx(ctx, "redis:6379", d, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call whose dial outlasts its deadline returned %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); !c.keeps(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the dial's connection was not kept")
		}
	}

	ctx, cancel = context.WithTimeout(context.Background(), took/2)
	defer cancel()
	conn, err := c.DialCtx(ctx, "redis:6379", d, nil)
	if err == nil {
		conn.Close()
		t.Fatal("a call with less time left than the dial took was handed the kept connection")
	}
	if ctx.Err() == nil {
		t.Errorf("a call with too little time for its HELLO failed (%v) while its context was live: a failover counts that against the store", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want one wrapping its context's deadline", err)
	}
	if !c.keeps() {
		t.Error("the connection was not kept for the next call")
	}
}
