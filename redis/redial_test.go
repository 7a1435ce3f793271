package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// These tests pin how rueidis makes a connection again once it is lost,
// which Options.Timeout's documentation relies on: the call that finds it
// gone dials on its own goroutine, bounded by the earlier of its context's
// deadline and the dial timeout, so the dial, TLS handshake and HELLO of a
// new connection are spent out of that call's Timeout; and a call arriving
// while another dials waits for that dial, whatever its own deadline. A
// dial timeout longer than Timeout would thus not shorten any decision's
// reconnection, and would hold decisions behind a dial made by a caller
// with more time (a ping, the deployment watch). So the TCP connect and
// TLS handshake are made by the store's own dial function (connector), in
// the background, and only HELLO is left on the caller's goroutine.

// lostConnection returns a client (dial timeout 5 s) whose connection
// through a proxy was just reset, and the proxy, which now delays every
// byte by oneWay in each direction.
func lostConnection(t *testing.T, oneWay time.Duration) (rueidis.Client, *faultproxy.Proxy) {
	t.Helper()
	proxy, err := faultproxy.New(redistest.Standalone(t).Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	co, err := redis.Options{Addrs: []string{proxy.Addr()}, Timeout: 5 * time.Second}.ClientOption()
	if err != nil {
		t.Fatal(err)
	}
	co.DisableRetry = true
	client, err := rueidis.NewClient(co)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	proxy.ResetAll()
	// The reset is seen by the next call, which fails; the one after
	// dials.
	for start := time.Now(); client.Do(context.Background(), client.B().Ping().Build()).Error() == nil; {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the connection still answers 5 s after it was reset")
		}
		proxy.ResetAll()
	}
	proxy.SetLatency(oneWay)
	return client, proxy
}

func TestARedialIsBoundedByTheCallersDeadline(t *testing.T) {
	client, proxy := lostConnection(t, 200*time.Millisecond)
	dials := proxy.Stats().Accepted
	const deadline = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	err := client.Do(ctx, client.B().Ping().Build()).Error()
	took := time.Since(start)
	if err == nil {
		t.Fatal("a PING answered within 50 ms through a link of 400 ms round trips")
	}
	if took > time.Second { // far below the dial timeout, far above the deadline on a busy machine
		t.Errorf("the call took %v under a deadline of %v: the redial was bounded by the 5 s dial timeout", took, deadline)
	}
	if proxy.Stats().Accepted == dials {
		t.Errorf("the call returned (%v) without a dial having reached the proxy: it did not dial itself", err)
	}
}

func TestACallWaitsForADialInProgressPastItsDeadline(t *testing.T) {
	client, proxy := lostConnection(t, 200*time.Millisecond)
	dials := proxy.Stats().Accepted
	dialed := make(chan error, 1)
	go func() { dialed <- client.Do(context.Background(), client.B().Ping().Build()).Error() }()
	for start := time.Now(); proxy.Stats().Accepted == dials; time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the call without a deadline did not dial within 5 s")
		}
	} // the goroutine is dialing: its HELLO takes 400 ms from now
	const deadline = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	client.Do(ctx, client.B().Ping().Build())
	if took := time.Since(start); took < 4*deadline {
		t.Errorf("a call under a deadline of %v returned after %v while another dialed for 400 ms: rueidis no longer holds it", deadline, took)
	}
	if err := <-dialed; err != nil {
		t.Errorf("the call without a deadline did not connect within the 5 s dial timeout: %v", err)
	}
}
