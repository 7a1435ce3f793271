package redis_test

import (
	"context"
	"crypto/tls"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/redis"
)

// A decision made while the store's watch (which reads the deployment
// every 100 ms) makes a new connection returns by its Timeout all the
// same: the watch's dial and HELLO, which every call needing that
// connection waits for, end by the Timeout of a call that started with
// them. Redis here is 23 ms away each way, behind a TLS 1.3 handshake: a
// connection's handshake and HELLO take about 46 ms each, under the
// default Timeout of 50 ms one by one.
func TestADecisionIsNotHeldPastItsTimeoutByTheWatchsDial(t *testing.T) {
	o, proxy := slowTLS(t, 0, tls.VersionTLS13, tls.VersionTLS13)
	// Refused meanwhile: under local, the first decision on Redis after an
	// outage also charges what was admitted locally, in a round trip of its own.
	o.OnStoreError = failover.Deny
	st, err := redis.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitFor(t, func() bool { return st.Ping(context.Background()) == nil })
	proxy.SetLatency(23 * time.Millisecond)

	check := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}}
	out := make([]sluice.Status, 1)
	var took []time.Duration
	for range 5 {
		proxy.ResetAll()
		// No call is made until the watch dials: the dial reaches the
		// proxy at once, then its handshake and HELLO begin.
		dials := proxy.Stats().Accepted
		for start := time.Now(); proxy.Stats().Accepted == dials; time.Sleep(100 * time.Microsecond) {
			if time.Since(start) > 5*time.Second {
				t.Fatal("the watch did not dial within 5 s of the reset")
			}
		}
		start := time.Now()
		st.Apply(context.Background(), check, out) // decided by Redis or, past its Timeout, locally
		took = append(took, time.Since(start))
		time.Sleep(300 * time.Millisecond) // the connection is made, or given up on
	}
	// A call's Timeout, 50 ms, plus scheduling noise on a busy machine
	// (the median of 5, so that one call slowed by other work does not
	// count); held by the watch's dial and HELLO under its 100 ms, and by
	// the PING that closes a connection whose HELLO failed, most returned
	// after about 100 ms.
	slices.Sort(took)
	if median := took[len(took)/2]; median > 50*time.Millisecond+25*time.Millisecond {
		t.Errorf("decisions made while the watch dialed returned after %v (median %v), past their Timeout of 50 ms", took, median)
	}
	t.Logf("decisions made while the watch dialed returned after %v", took)
}
