package client_test

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// A server counts a request when it arrives, some time after the gate
// counted it: a gate of the server's own fixed window, counting each
// unit only when it is sent, lets the units sent at the end of one window
// and those sent at the start of the next arrive in the same window. A
// local gate over a window counts each unit from its send until w after
// its answer, so that a server enforcing that window exactly on arrival,
// whatever the requests' delays, never refuses.
func TestALocalGateAtTheServersWindowIsNotOvershotByLatency(t *testing.T) {
	t.Parallel()
	const q, w = 5, 200 * time.Millisecond
	for name, l := range map[string]sluice.Limit{
		"fixed window": sluice.FixedWindow(q, w),
		"sliding log":  sluice.SlidingLog(q, w),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			rng := rand.New(rand.NewPCG(1, 2))
			var arrivals []time.Time
			refused := 0
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				mu.Lock()
				delay := time.Duration(rng.Int64N(int64(60 * time.Millisecond)))
				mu.Unlock()
				time.Sleep(delay) // on its way: the server counts it now
				mu.Lock()
				now := time.Now()
				n := 0
				for _, a := range arrivals {
					if name == "fixed window" && a.UnixNano()/int64(w) == now.UnixNano()/int64(w) ||
						name == "sliding log" && now.Sub(a) < w {
						n++
					}
				}
				if n >= q {
					refused++
					mu.Unlock()
					rw.WriteHeader(http.StatusTooManyRequests)
					return
				}
				arrivals = append(arrivals, now)
				mu.Unlock()
			}))
			defer srv.Close()
			tr := &client.Transport{Gate: client.NewLocalGate(l), IgnoreRemaining: true}
			hc := &http.Client{Transport: tr}
			var wg sync.WaitGroup
			for range 6 {
				wg.Go(func() {
					for range 8 {
						resp, err := hc.Post(srv.URL, "text/plain", nil) // not retried
						if err != nil {
							t.Error(err)
							return
						}
						resp.Body.Close()
					}
				})
			}
			wg.Wait()
			if refused > 0 {
				t.Errorf("%d of 48 requests refused by a server of the gate's own %d per %v", refused, q, w)
			}
		})
	}
}
