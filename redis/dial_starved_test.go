package redis

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A call handed a new connection that then does not run until its
// deadline has passed (a loaded machine) sends no HELLO in time; rueidis
// then closes the connection after a PING that a stalled Redis does not
// answer, holding the call, and every call waiting for that connection
// whatever its deadline, until Redis answers or a second has passed. The
// connection is closed at the call's deadline instead, unless Redis has
// answered on it by then, so that the call returns within about its
// Timeout: about 210 ms here (the dial is made to wait 10 ms past the
// deadline), where rueidis's hold made it about 1.2 s.
func TestAStarvedDialHoldsNoCallPastItsTimeout(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy, err := faultproxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	const timeout = 200 * time.Millisecond
	o := Options{Addrs: []string{proxy.Addr()}, Timeout: timeout}
	co, dials, err := o.clientOption()
	if err != nil {
		t.Fatal(err)
	}
	var starve atomic.Bool
	dial := co.DialCtxFn
	co.DialCtxFn = func(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
		conn, err := dial(ctx, dst, d, tc)
		if dl, ok := ctx.Deadline(); ok && starve.Load() {
			time.Sleep(time.Until(dl) + 10*time.Millisecond) // not run until past its deadline
		}
		return conn, err
	}
	c, err := connect(ModeStandalone, co, dials)
	if err != nil {
		t.Fatal(err)
	}
	defer dials.close()
	defer c.Close()
	st := New(c, WithTimeout(timeout))
	checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}}
	out := make([]sluice.Status, 1)
	if err := st.Apply(context.Background(), checks, out); err != nil {
		t.Fatal(err)
	}

	srv.Pause()
	defer srv.Resume()
	starve.Store(true)
	proxy.ResetAll()
	// Room for a loaded machine's scheduling, well short of the hold.
	const bound = 3 * timeout
	var worst time.Duration
	for range 5 {
		start := time.Now()
		err := st.Apply(context.Background(), checks, out)
		took := time.Since(start)
		t.Logf("call after %v: %v", took, err)
		worst = max(worst, took)
	}
	if worst > bound {
		t.Errorf("a call returned %v after it started, past its %v Timeout (bound %v)", worst, timeout, bound)
	}
}
