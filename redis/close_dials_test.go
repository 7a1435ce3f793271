package redis_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/redis"
)

// A store's Close ends what its dial function does in the background: a
// TCP connect and TLS handshake under way when the store closes is
// abandoned, and a connection made after its caller gave up, kept for a
// later call, is closed. So Close leaves no goroutine and no connection
// to Redis behind it, as a service's own leak checks require. The
// handshake here is TLS 1.2's two round trips through a proxy: 1.6 s
// while the store closes during it, 120 ms where it ends first and its
// connection is kept.
func TestClosingAStoreLeavesNoDialAndNoConnection(t *testing.T) {
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}
	dial := func(t *testing.T, o redis.Options) (call func(context.Context) error, close func() error) {
		st := dialWithin(t, o, 5*time.Second)
		out := make([]sluice.Status, 1)
		return func(ctx context.Context) error { return st.Apply(ctx, []sluice.Check{check}, out) }, st.Close
	}
	open := func(t *testing.T, o redis.Options) (call func(context.Context) error, close func() error) {
		st, err := redis.Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return st.Ping(context.Background()) == nil })
		return st.Ping, st.Close
	}
	for _, tc := range []struct {
		name   string
		store  func(*testing.T, redis.Options) (call func(context.Context) error, close func() error)
		oneWay time.Duration // the proxy's delay each way once the store is connected
		kept   bool          // whether Close waits for the dial's connection to be kept
	}{
		{"Dial, closed during a dial", dial, 400 * time.Millisecond, false},
		{"Dial, closed with a connection kept", dial, 30 * time.Millisecond, true},
		{"Open, closed during a dial", open, 400 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, proxy := slowTLS(t, 0, tls.VersionTLS12, tls.VersionTLS12)
			before := goleak.IgnoreCurrent()
			call, closeStore := tc.store(t, o)
			proxy.SetLatency(tc.oneWay)
			proxy.ResetAll()
			// A call finds its connection gone; this one, or the next,
			// starts a dial (which reaches the proxy at once) and gives up
			// on it after the store's 50 ms.
			dials := proxy.Stats().Accepted
			for start := time.Now(); proxy.Stats().Accepted == dials; {
				if time.Since(start) > 5*time.Second {
					t.Fatal("no call dialed within 5 s of the reset")
				}
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				if err := call(ctx); err == nil {
					t.Fatalf("a call answered through a proxy %v away with a TLS 1.2 handshake to make", tc.oneWay)
				}
				cancel()
			}
			if tc.kept {
				time.Sleep(500 * time.Millisecond) // the handshake ends, no call claims its connection
			}
			closeStore()

			// goleak looks again for about 0.4 s before it reports a
			// goroutine, less than a quarter of the 1.6 s handshake.
			if err := goleak.Find(before,
				goleak.IgnoreAnyFunction("github.com/sluice-dev/sluice/internal/faultproxy.(*Proxy).serve"),
				goleak.IgnoreAnyFunction("github.com/sluice-dev/sluice/internal/faultproxy.(*Proxy).pipe"),
				goleak.IgnoreAnyFunction("github.com/sluice-dev/sluice/internal/faultproxy.(*Proxy).pipe.func1"),
			); err != nil {
				t.Errorf("goroutines left after the store's Close: %v", err)
			}
			// Undelayed, the proxy soon sees a closed connection's end (one
			// already on its way may still take the 400 ms it was delayed
			// by, longer on a busy machine); a dial still under way would
			// end now too, and be kept, open for good.
			proxy.SetLatency(0)
			n := proxy.Stats().Open
			for deadline := time.Now().Add(2 * time.Second); n != 0 && time.Now().Before(deadline); n = proxy.Stats().Open {
				time.Sleep(10 * time.Millisecond)
			}
			if n != 0 {
				t.Errorf("%d connections to Redis open 2 s after the store's Close, want none", n)
			}
		})
	}
}
