package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A call with too little time left for its HELLO is refused the kept
// connection and leaves DialCtx at once. rueidis makes a wire's connection
// once for every call that needs it (mux._pipe's singleconnect): the calls
// that come while that dial runs wait for it and are handed its outcome.
// Were the hasty call to wait out its own deadline inside DialCtx, a
// patient call arriving meanwhile would be failed with the hasty call's
// error, wrapped as sluice.ErrStoreUnavailable while its own context and
// Timeout are live and a connection was kept for it: a failover counts
// that against the store and feeds its breaker.
func TestAPatientCallIsNotFailedByAHastyCallRefusedTheKeptConnection(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy, err := faultproxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	// rueidis picks one of its pipelined connections at random per
	// command (2 on 2 cores, 4 from 4): a patient call meets the hasty one
	// on its connection about every other round here.
	for round := range 10 {
		if hastyFailsPatient(t, proxy) {
			return
		}
		t.Logf("round %d: the patient call took another connection", round)
	}
}

// hastyFailsPatient runs one round of the test above on a client of its
// own, and reports whether it found the defect (reported as an error).
func hastyFailsPatient(t *testing.T, proxy *faultproxy.Proxy) bool {
	const timeout = DefaultTimeout // 50 ms, as shipped
	o := Options{Addrs: []string{proxy.Addr()}, Timeout: timeout}
	co, dials, err := o.clientOption()
	if err != nil {
		t.Fatal(err)
	}
	var slow atomic.Int64 // how long a TCP connect takes (a distant or loaded Redis)
	dials.dial = func(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
		if s := time.Duration(slow.Load()); s > 0 {
			select {
			case <-time.After(s):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return plainDial(ctx, dst, d, tc)
	}
	c, err := connect(ModeStandalone, co, dials)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer dials.close()
	st := New(c, WithTimeout(timeout)) // batching as shipped
	lim := sluice.FixedWindow(1_000_000, time.Hour)
	check := []sluice.Check{{Key: "k", Limit: lim, Cost: 1}}
	out := make([]sluice.Status, 1)
	if err := st.Apply(context.Background(), check, out); err != nil {
		t.Fatal(err)
	}

	// Connections now take 40 ms to make: more than an Envoy caller's 20
	// ms, less than the store's Timeout.
	slow.Store(int64(40 * time.Millisecond))
	proxy.ResetAll()
	for deadline := time.Now().Add(5 * time.Second); !dials.keeps(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no connection was kept for a later call")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		st.Apply(ctx, check, make([]sluice.Status, 1))
		cancel()
	}

	// A hasty call (10 ms left, less than the dial took and than half the
	// Timeout) is refused the kept connection; a patient call comes 2 ms
	// later with its whole Timeout, which leaves HELLO and its round trip
	// room on the kept connection.
	hasty := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		hasty <- st.Apply(ctx, check, make([]sluice.Status, 1))
	}()
	time.Sleep(2 * time.Millisecond)
	ctx := context.Background()
	start := time.Now()
	err = st.Apply(ctx, check, out)
	took := time.Since(start)
	herr := <-hasty
	t.Logf("hasty call: %v; patient call after %v: %v", herr, took, err)
	if err != nil && errors.Is(err, sluice.ErrStoreUnavailable) && ctx.Err() == nil && took < timeout {
		t.Errorf("a patient call was failed after %v, within its %v Timeout and with its context live, by a hasty "+
			"call's deadline while a connection was kept for it: %v", took, timeout, err)
		return true
	}
	return false
}
