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
// answered on it by then, so that the call returns as soon as its dial
// does, not a second later (calls of about 1.2 s on a 200 ms Timeout).
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
	var returned atomic.Int64 // when a starved dial returned, in Unix ns
	dial := co.DialCtxFn
	co.DialCtxFn = func(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
		conn, err := dial(ctx, dst, d, tc)
		if dl, ok := ctx.Deadline(); ok && starve.Load() {
			time.Sleep(time.Until(dl) + 10*time.Millisecond) // not run until past its deadline
			returned.Store(time.Now().UnixNano())
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
	// What a call spends once its starved dial has returned: about a second
	// when rueidis holds it on the open connection; none once the
	// connection is closed, the bound leaving room for a loaded machine,
	// whose timers fired up to 475 ms late under 8 busy loops.
	const bound = 750 * time.Millisecond
	var held time.Duration
	starved := 0
	for range 5 {
		returned.Store(0)
		start := time.Now()
		err := st.Apply(context.Background(), checks, out)
		end := time.Now()
		t.Logf("call after %v: %v", end.Sub(start), err)
		if r := returned.Load(); r != 0 {
			starved++
			held = max(held, end.Sub(time.Unix(0, r)))
		}
	}
	if starved == 0 {
		t.Fatal("no call made a new connection")
	}
	if held > bound {
		t.Errorf("a call returned %v after its dial, itself past the call's deadline, had returned (bound %v)", held, bound)
	}
	t.Logf("%d calls made a new connection; the longest returned %v after its dial", starved, held)
}
