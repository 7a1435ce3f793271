package envoy_test

import (
	"fmt"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

	"github.com/sluice-dev/sluice/envoy"
)

// A peek (hits_addend 0) at a fixed window also reads the record of the
// window having gone over, so a request of MaxDescriptors descriptors may
// need more store checks than one sluice call carries: it is decided all
// the same, the descriptors it charges together, as any other request.
func TestARequestOfManyPeeksIsDecided(t *testing.T) {
	h := serve(t, apiRules)
	const n = envoy.MaxDescriptors
	// The last descriptor peeks at a window that a request went over.
	h.expect(h.ask(request("api", 6, desc("client", "over"))), over, status{over, "per-client:5/MINUTE", 0, time.Minute})
	peeks := func(last string) []*ratelimitv3.RateLimitDescriptor {
		ds := make([]*ratelimitv3.RateLimitDescriptor, n)
		for i := range n - 1 {
			ds[i] = withHits(desc("client", fmt.Sprint("p", i)), 0)
		}
		ds[n-1] = withHits(desc("client", last), 0)
		return ds
	}
	resp := h.ask(request("api", 0, peeks("fresh")...))
	h.expect(resp, ok)
	for i, st := range resp.Statuses {
		if got, want := statusOf(st), (status{ok, "per-client:5/MINUTE", 5, time.Minute}); got != want {
			t.Errorf("all peeks, status %d: %+v, want %+v", i, got, want)
		}
	}
	resp = h.ask(request("api", 0, peeks("over")...))
	h.expect(resp, over)
	if got, want := statusOf(resp.Statuses[n-1]), (status{over, "per-client:5/MINUTE", 0, time.Minute}); got != want {
		t.Errorf("the peek at the window that went over: %+v, want %+v", got, want)
	}

	// Half peeks, half hits: the hits are charged together, and all of
	// them or none.
	mixed := func(last string) []*ratelimitv3.RateLimitDescriptor {
		ds := make([]*ratelimitv3.RateLimitDescriptor, n)
		for i := range n / 2 {
			ds[2*i] = withHits(desc("client", fmt.Sprint("p", i)), 0)
			ds[2*i+1] = desc("client", fmt.Sprint("h", i))
		}
		ds[n-2] = withHits(desc("client", last), 0)
		return ds
	}
	h.expect(h.ask(request("api", 2, mixed("fresh")...)), ok)
	h.expect(h.ask(request("api", 2, mixed("over")...)), over)
	resp = h.ask(request("api", 1, mixed("fresh")...))
	h.expect(resp, ok)
	for i := 1; i < n; i += 2 {
		if got, want := statusOf(resp.Statuses[i]), (status{ok, "per-client:5/MINUTE", 2, time.Minute}); got != want {
			t.Errorf("hit %d after two requests were charged and one refused: %+v, want %+v", i, got, want)
		}
	}
}
