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
	"github.com/sluice-dev/sluice/internal/realtest"
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

// A Redis whose TLS handshake takes longer than Timeout is connected to
// all the same: the handshake goes on in the background past the deadline
// of Open's first attempt, whose log line names the timeout and what it
// bounds instead of only saying that Redis is not reachable, and the next
// attempt finds the connection made and spends only HELLO.
func TestATimeoutShorterThanTheHandshakeIsLoggedAsSuch(t *testing.T) {
	// TLS 1.2's handshake is two round trips: 80 ms here, as TCP and TLS
	// 1.3 take to a Redis 40 ms away.
	o, _ := slowTLS(t, 20*time.Millisecond, tls.VersionTLS12, tls.VersionTLS12)
	var logs realtest.Buffer
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	st, err := redis.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitFor(t, func() bool { return st.Ping(context.Background()) == nil })
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) == 0 || !strings.Contains(lines[0], "redis store not reachable") {
		t.Fatalf("Open logged %q, want first a line saying Redis is not reachable", logs.String())
	}
	for _, want := range []string{"timeout=50ms", "bounds each decision and each new connection's HELLO"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line saying Redis is not reachable lacks %q:\n%s", want, lines[0])
		}
	}
	if !strings.Contains(logs.String(), "redis store connected") {
		t.Errorf("Open's store answered a ping without logging that it connected:\n%s", logs.String())
	}
}

// With a Timeout that holds a new connection's every round trip with a
// wide margin (over TLS 1.3 a handshake, a HELLO and the script's round
// trip here), a Redis 20 ms away is decided on again after its
// connections are reset; TestAConnectionSlowerThanTimeoutIsMadeInTheBackground
// is the case of a Timeout that holds only HELLO and the script's.
func TestAReconnectionWithinTimeoutDecidesAgain(t *testing.T) {
	const oneWay = 10 * time.Millisecond // a round trip of 20 ms
	o, proxy := slowTLS(t, oneWay, tls.VersionTLS13, tls.VersionTLS13)
	o.Timeout = time.Second
	st, err := redis.Dial(o)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := sluice.Check{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}
	if !decidesWithin(st, c, 5*time.Second) {
		t.Fatal("no decision made by Redis in 5 s over its first connection")
	}
	proxy.ResetAll()
	out := make([]sluice.Status, 1)
	run := 0 // decisions in a row on Redis
	for deadline := time.Now().Add(10 * time.Second); run < 5; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not 5 decisions in a row on Redis within 10 s of its connections' reset (last run %d)", run)
		}
		if st.Apply(context.Background(), []sluice.Check{c}, out) == nil {
			run++
		} else {
			run = 0
		}
	}
}

// dialWithin returns a Store Dial made within d, trying again each time
// Dial fails: over TLS under the default Timeout, a first connection can
// outlast it on a machine busy with other work, however near Redis is.
func dialWithin(t *testing.T, o redis.Options, d time.Duration) *redis.Store {
	t.Helper()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		st, err := redis.Dial(o)
		if err == nil {
			return st
		}
		if time.Since(start) > d {
			t.Fatalf("Dial failed for %v: %v", d, err)
		}
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

// A Redis slower to connect to than one decision's Timeout, but answering
// a decision within it, is decided on again after its connections are
// reset: the TCP connect and the TLS handshake of a new connection go on in
// the background past the deadline of the call that needed it, and a later
// call finds the connection made and spends only HELLO and its own round
// trip. (Made within each call's Timeout, the connection here, TLS 1.2's
// two round trips and HELLO's, 90 ms, is never made under the default 50.)
func TestAConnectionSlowerThanTimeoutIsMadeInTheBackground(t *testing.T) {
	const oneWay = 15 * time.Millisecond // a round trip of 30 ms
	o, proxy := slowTLS(t, oneWay, tls.VersionTLS12, tls.VersionTLS12)
	proxy.SetLatency(0)
	st := dialWithin(t, o, 5*time.Second)
	defer st.Close()
	c := sluice.Check{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}
	if !decidesWithin(st, c, 5*time.Second) {
		t.Fatal("no decision made by Redis in 5 s over its first connection")
	}
	proxy.SetLatency(oneWay)
	proxy.ResetAll()
	out := make([]sluice.Status, 1)
	run, tries := 0, 0 // decisions in a row on Redis, calls
	for deadline := time.Now().Add(10 * time.Second); run < 5; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not 5 decisions in a row on Redis within 10 s of its connections' reset (%d calls, last run %d)", tries, run)
		}
		tries++
		if st.Apply(context.Background(), []sluice.Check{c}, out) == nil {
			run++
		} else {
			run = 0
		}
	}
}
