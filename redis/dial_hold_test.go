package redis_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/redis"
)

// A decision that needs a connection another call is making (rueidis makes
// one at a time per connection, every call waiting for it) returns by its
// own Timeout, whatever time the call making it has: Open's watch, which
// reads with 100 ms, more than the default Timeout; a Ping under a
// readiness probe's context; rueidis's own dials. Here the one making it
// is a PING with 1 s, and Redis is 90 ms away each way behind TLS 1.3:
// the handshake and HELLO take 180 ms each, each under the Timeout of
// 200 ms, not both.
func TestADecisionIsNotHeldPastItsTimeoutByALongerCallsDial(t *testing.T) {
	o, proxy := slowTLS(t, 0, tls.VersionTLS13, tls.VersionTLS13)
	const timeout = 200 * time.Millisecond
	o.Timeout = timeout
	c, err := redis.NewClient(o)
	for start := time.Now(); err != nil && time.Since(start) < 5*time.Second; time.Sleep(20 * time.Millisecond) {
		c, err = redis.NewClient(o) // a first TLS connection can outlast 200 ms on a busy machine
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := redis.New(c, redis.WithTimeout(timeout))
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}
	if !decidesWithin(st, check, 5*time.Second) {
		t.Fatal("no decision made by Redis in 5 s")
	}
	proxy.SetLatency(90 * time.Millisecond)

	out := make([]sluice.Status, 1)
	for round := range 3 {
		proxy.ResetAll()
		time.Sleep(100 * time.Millisecond) // rueidis sees its connection reset
		// A PING that finds a connection (one kept from an earlier dial,
		// or the reset not seen yet) is sent again until one dials.
		dials := proxy.Stats().Accepted
		var pinged chan struct{}
		for start := time.Now(); proxy.Stats().Accepted == dials; time.Sleep(100 * time.Microsecond) {
			if time.Since(start) > 5*time.Second {
				t.Fatal("no PING dialed within 5 s of the reset")
			}
			select {
			case <-pinged:
				pinged = nil
			default:
			}
			if pinged == nil {
				pinged = make(chan struct{})
				go func(done chan struct{}) {
					defer close(done)
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					c.Do(ctx, c.B().Ping().Build())
				}(pinged)
			}
		}
		start := time.Now()
		st.Apply(context.Background(), []sluice.Check{check}, out)
		took := time.Since(start)
		<-pinged
		t.Logf("round %d: returned after %v", round, took)
		// The Timeout plus scheduling noise on a busy machine; held by the
		// PING's handshake and HELLO, it would return after about 360 ms.
		if took > timeout+80*time.Millisecond {
			t.Errorf("round %d: a decision made while a PING with 1 s dialed returned after %v, past its Timeout of %v", round, took, timeout)
		}
		time.Sleep(time.Second) // the next call's connection is made, or given up on
	}
}
