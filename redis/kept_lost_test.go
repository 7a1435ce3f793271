package redis_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A connection made in the background after its caller gave up is kept
// for the next call. Nothing is sent on it while it waits, so Redis's own
// idle timeout (likewise CLIENT KILL, a restart or a middlebox's idle
// bound) may close it; the call handed it is then sent again on a
// connection made anew, since nothing of it was written, rather than
// failing as an error of a Redis that is up.
func TestACallHandedAKeptConnectionRedisClosedIsSentAgain(t *testing.T) {
	srv := redistest.Secure(t, "pw")
	srv.MustDo("CONFIG", "SET", "timeout", "1") // idle clients closed after 1 s
	proxy, err := faultproxy.New(srv.TLSAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	proxy.SetLatency(10 * time.Millisecond) // TLS 1.2's handshake: 2 round trips, 40 ms
	c := srv.ClientTLS(t).Clone()
	c.MinVersion, c.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	o := redis.Options{Addrs: []string{proxy.Addr()}, TLS: c, Username: redistest.SecureUser, Password: "pw",
		Timeout: time.Second}
	st := dialWithin(t, o, 5*time.Second)
	defer st.Close()
	check := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1_000_000, time.Hour), Cost: 1}}
	if !decidesWithin(st, check[0], 5*time.Second) {
		t.Fatal("no decision in 5 s")
	}

	proxy.ResetAll() // the store's connection is lost: the next call makes one
	time.Sleep(100 * time.Millisecond)
	// A caller with 5 ms starts the new connection and gives up on it; the
	// handshake ends in the background and the connection is kept.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	st.Apply(ctx, check, make([]sluice.Status, 1))
	cancel()
	time.Sleep(2500 * time.Millisecond) // Redis closes it, idle past its timeout

	if err := st.Apply(context.Background(), check, make([]sluice.Status, 1)); err != nil {
		t.Errorf("a call on a Redis that is up, handed the kept connection Redis had closed, failed: %v", err)
	}
}
