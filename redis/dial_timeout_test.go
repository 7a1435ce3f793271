package redis_test

import (
	"context"
	"crypto/tls"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// slowTLS returns Options reaching a TLS-only Redis through a proxy that
// delays every byte by oneWay in each direction, with the TLS versions
// allowed between minVersion and maxVersion. The proxy accepts at once: a
// connection's TCP handshake costs no round trip here, as it does to a
// Redis that far away.
func slowTLS(t *testing.T, oneWay time.Duration, minVersion, maxVersion uint16) (redis.Options, *faultproxy.Proxy) {
	t.Helper()
	srv := redistest.Secure(t, "pw")
	proxy, err := faultproxy.New(srv.TLSAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	proxy.SetLatency(oneWay)
	c := srv.ClientTLS(t).Clone()
	c.MinVersion, c.MaxVersion = minVersion, maxVersion
	return redis.Options{Addrs: []string{proxy.Addr()}, TLS: c, Username: redistest.SecureUser, Password: "pw"}, proxy
}

// A Redis whose TLS handshake takes longer than Timeout is never reached
// (Timeout bounds the dial and the handshake as well as each decision):
// the log lines say so, and name the timeout, instead of only that Redis
// is not reachable.
func TestATimeoutShorterThanTheHandshakeIsLoggedAsSuch(t *testing.T) {
	// TLS 1.2's handshake is two round trips: 80 ms here, as TCP and TLS
	// 1.3 take to a Redis 40 ms away.
	o, _ := slowTLS(t, 20*time.Millisecond, tls.VersionTLS12, tls.VersionTLS12)
	var logs syncBuffer
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	st, err := redis.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	time.Sleep(time.Second) // a few more attempts
	if err := st.Ping(context.Background()); err == nil {
		t.Fatal("connected within 50 ms though its TLS handshake takes 80 ms")
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) == 0 || !strings.Contains(lines[0], "redis store not reachable") {
		t.Fatalf("Open logged %q, want first a line saying Redis is not reachable", logs.String())
	}
	for _, want := range []string{"timeout=50ms", "bounds each new connection's dial, TLS handshake and HELLO"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line saying Redis is not reachable lacks %q:\n%s", want, lines[0])
		}
	}
}

// A decision that finds its connection gone makes a new one within its
// own Timeout: over TLS 1.3 a handshake, a HELLO and the script's round
// trip here (the TCP handshake too, to a real Redis that far away). Under
// the default 50 ms, a Redis 20 ms away, which answers each decision in
// time, is never decided on again once its connection drops; under a
// Timeout of 5 round trips it is from the next decision on.
func TestAReconnectionFitsInTimeoutOrNeverHappens(t *testing.T) {
	const oneWay = 10 * time.Millisecond // a round trip of 20 ms
	cases := []struct {
		name    string
		timeout time.Duration
		decided bool
	}{
		{"the default 50 ms, less than 3 round trips", 0, false},
		{"5 round trips", 5 * 2 * oneWay, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, proxy := slowTLS(t, oneWay, tls.VersionTLS13, tls.VersionTLS13)
			o.Timeout = tc.timeout
			st, err := redis.Dial(o)
			for try := 1; err != nil && try < 10; try++ { // each round trip fits, with a margin a busy machine may eat
				st, err = redis.Dial(o)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			c := sluice.Check{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}
			if !decidesWithin(st, c, 2*time.Second) {
				t.Fatal("no decision made by Redis in 2 s over its first connection")
			}
			proxy.ResetAll()
			if got := decidesWithin(st, c, time.Second); got != tc.decided {
				t.Errorf("decided by Redis in the second after its connection was reset: %v, want %v", got, tc.decided)
			}
			if !tc.decided {
				return
			}
			for i := range 5 {
				if err := st.Apply(context.Background(), []sluice.Check{c}, make([]sluice.Status, 1)); err != nil {
					t.Errorf("decision %d after the reconnection: %v", i, err)
				}
			}
		})
	}
}

// decidesWithin reports whether s decides c within d, trying every 20 ms.
func decidesWithin(s *redis.Store, c sluice.Check, d time.Duration) bool {
	out := make([]sluice.Status, 1)
	for start := time.Now(); time.Since(start) < d; time.Sleep(20 * time.Millisecond) {
		if s.Apply(context.Background(), []sluice.Check{c}, out) == nil {
			return true
		}
	}
	return false
}
