package redis_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/redis"
)

// A Redis whose TLS handshake and HELLO each fit in Timeout, but not both,
// is connected to, at once and again after its connections are reset: a
// call left with too little time for HELLO once its dial ends leaves the
// connection to the next call, which has its whole Timeout for HELLO, and
// NewClient (Dial, Open) tries a second time at once when its first
// attempt ended so. Here Redis is 15 ms away each way behind TLS 1.3: the
// handshake and HELLO take about 30 ms each, under the default 50 ms.
func TestAHandshakeAndHelloThatFitATimeoutEachConnect(t *testing.T) {
	o, proxy := slowTLS(t, 15*time.Millisecond, tls.VersionTLS13, tls.VersionTLS13)
	var st *redis.Store
	var err error
	for range 3 { // a busy machine may slow one attempt past 50 ms
		if st, err = redis.Dial(o); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("Dial failed 3 times in a row: %v", err)
	}
	defer st.Close()

	proxy.ResetAll()
	c := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}}
	out := make([]sluice.Status, 1)
	start := time.Now()
	for st.Apply(context.Background(), c, out) != nil {
		if time.Since(start) > 3*time.Second {
			t.Fatal("not decided on Redis again within 3 s of its connections' reset")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("decided on Redis again %v after its connections' reset", time.Since(start))
}
