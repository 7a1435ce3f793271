package envoy_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// The over-limit record of a window that a request went over (one unit
// per window) has a state ID of its own, not the rule's, which every
// MINUTE rule shares. The memory store ranks a state for eviction by
// every parameter set of its ID it has met, the strictest counting: were
// the record under the rule's ID, once one client went over, every minute
// state that counted one request would rank as refusing, and a full store
// would evict none of them and refuse every new client at its first
// request. With no client over, the same flood evicts the least used
// states and admits every newcomer; so it does after one went over.
func TestOneClientOverLeavesAFullMemoryStoreRoomForNewClients(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(`domain: d
descriptors:
  - key: remote_address
    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 100}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, wentOver := range []bool{false, true} {
		clock := &fakeClock{}
		clock.us.Store(sluice.MicrosSinceEpoch(start.Add(30 * time.Second))) // stands still
		mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0),
			memory.WithMaxKeys(16), memory.WithShards(1))
		t.Cleanup(func() { mem.Close() })
		svc, err := envoy.NewService(sluice.NewLimiter(mem), rules, envoy.Options{Clock: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{t: t, clock: clock, svc: svc, client: dial(t, svc)}
		if wentOver {
			h.expect(h.ask(request("d", 100, desc("remote_address", "192.0.2.1"))), ok)
			h.expect(h.ask(request("d", 1, desc("remote_address", "192.0.2.1"))), over)
		}
		refused := 0
		for i := range 200 {
			if h.ask(request("d", 1, desc("remote_address", "10.0.0."+strconv.Itoa(i)))).OverallCode != ok {
				refused++
			}
		}
		if refused > 0 {
			t.Errorf("one client over %v: %d of 200 new clients were OVER_LIMIT at their first request, "+
				"the store full of states at 1 of 100: %+v", wentOver, refused, mem.Stats())
		}
	}
}

// A requests_per_unit 0 rule's record of hits is the over-limit record of
// a fixed window of its unit on the same descriptor, as
// envoyproxy/ratelimit counts both in one counter: after a reload that
// blocks a descriptor whose window went over, a peek at it is OVER_LIMIT
// (the counter is past 0), and a peek at another descriptor is OK.
func TestABlockListReadsTheWindowsThatWentOverBeforeIt(t *testing.T) {
	h := serve(t, `domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 1, name: per-client}
`)
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), ok)
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), over) // the window went over
	h.reload(`domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 0, name: per-client}
`)
	h.expect(h.ask(request("d", 0, withHits(desc("client", "c1"), 0))), over, status{over, "per-client:0/HOUR", 0, time.Hour})
	h.expect(h.ask(request("d", 0, withHits(desc("client", "c2"), 0))), ok, status{ok, "per-client:0/HOUR", 0, time.Hour})
}
