package client_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// docs/client.md: "Hosts that send no headers are not held at all, and
// neither is a host that stops sending them." A server that stated a
// concurrency quota of 2 and then stops sending any RateLimit field (its
// limit removed on a reload) does not keep the Transport at 2 requests in
// flight for good: no probe goes for a slot, so an admitted answer
// without fields opens the host.
func TestAHostThatStopsStatingAConcurrencyQuotaIsNotCappedForGood(t *testing.T) {
	var inflight, maxAfter atomic.Int64
	var headers atomic.Bool
	headers.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		if headers.Load() {
			w.Header().Set("RateLimit-Policy", `"in-flight";q=2;qu="concurrent-requests"`)
			w.Header().Set("RateLimit", `"in-flight";r=`+strconv.FormatInt(max(2-n, 0), 10))
		} else {
			for {
				m := maxAfter.Load()
				if n <= m || maxAfter.CompareAndSwap(m, n) {
					break
				}
			}
		}
		time.Sleep(40 * time.Millisecond)
	}))
	defer srv.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 16}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: &client.Transport{Base: base, Retry: client.RetryPolicy{MaxWait: 10 * time.Second}}}
	get := func() {
		resp, err := hc.Get(srv.URL)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close() // empty: the request has ended
	}
	for range 4 { // learn the quota
		get()
	}
	headers.Store(false)
	deadline := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				get()
			}
		})
	}
	wg.Wait()
	if m := maxAfter.Load(); m <= 2 {
		t.Errorf("6 workers for 1 s after the server stopped sending RateLimit fields: at most %d requests in flight at it; want the host open again (more than the 2 slots it once stated)", m)
	}
}

// docs/client.md: "a body with nothing to read, or a refusal's, ends its
// request when it is closed". A HEAD answer has nothing to read whatever
// its Content-Length: closed, it gives its slot back at once, with a
// LeaseGate (whose release wraps the body) as without one, rather than
// counting as a body cut short, whose slot is held until a probe after
// the quota's reset. 12 HEADs from 2 workers against a quota of 2 slots
// then take about 0.15 s, not a second each round.
func TestAHeadAnswerClosedThroughALeaseGateEndsItsRequest(t *testing.T) {
	srv, st := slotStatsServer(t, []sluice.Limit{sluice.Concurrency(2, time.Minute)}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		time.Sleep(20 * time.Millisecond)
	})
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	gate := client.NewLocalGate(sluice.Concurrency(10, time.Minute))
	hc := &http.Client{Transport: &client.Transport{Base: base, Gate: gate, Retry: client.RetryPolicy{MaxRetries: -1}}}
	var wg sync.WaitGroup
	var next atomic.Int64
	start := time.Now()
	for range 2 {
		wg.Go(func() {
			for next.Add(1) <= 12 {
				resp, err := hc.Head(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("12 HEADs of 20 ms from 2 workers through a LeaseGate, quota of 2 slots: took %v (%d refused at the server); want well under 2 s, each HEAD's slot back when its empty body is closed", elapsed.Round(time.Millisecond), st.refused.Load())
	}
}
