package envoy_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
)

// A give-back that the store does not take — its clock more than half a
// window off the service's, so the receipt names another window, or the
// key's state reset or lost in between — is answered with what the limit
// holds after it, as envoyproxy/ratelimit answers with its counter after
// the decrement: not with the units it was asked to give back.
func TestNegativeHitsTheStoreSkipsAreNotAnsweredAsGiven(t *testing.T) {
	const limit = "per-client:5/MINUTE"
	t.Run("a service clock 40 s ahead of the store's", func(t *testing.T) {
		var h *harness
		h = serve(t, apiRules, envoy.Options{Clock: func() time.Time { return h.clock.Now().Add(40 * time.Second) }})
		h.expect(h.ask(request("api", 3, desc("client", "c"))), ok, status{ok, limit, 2, 20 * time.Second})
		resp := h.ask(request("api", 0, negative(withHits(desc("client", "c"), 2))))
		peek := h.ask(request("api", 0, withHits(desc("client", "c"), 0)))
		got, held := statusOf(resp.Statuses[0]), statusOf(peek.Statuses[0])
		if resp.OverallCode != ok || got.code != ok || got.remaining != held.remaining {
			t.Errorf("the give-back answered %v %d remaining; the window holds %d after it", resp.OverallCode, got.remaining, held.remaining)
		}
	})
	t.Run("a store that takes no refund", func(t *testing.T) {
		h := serve(t, apiRules) // its clock and store, behind a store that skips refunds
		rules, err := envoy.LoadRules("rules.yaml", []byte(apiRules))
		if err != nil {
			t.Fatal(err)
		}
		svc, err := envoy.NewService(sluice.NewLimiter(skippingStore{h.store}), rules, envoy.Options{Clock: h.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		h.svc, h.client = svc, dial(t, svc)
		h.expect(h.ask(request("api", 3, desc("client", "c"))), ok, status{ok, limit, 2, time.Minute})
		h.expect(h.ask(request("api", 0, negative(withHits(desc("client", "c"), 2)), negative(desc("client", "c")))), ok,
			status{ok, limit, 2, time.Minute}, status{ok, limit, 2, time.Minute})
		h.expect(h.ask(request("api", 0, withHits(desc("client", "c"), 0))), ok, status{ok, limit, 2, time.Minute})
	})
}

// skippingStore is a Refunder that takes back nothing, as a store does
// for a receipt of a key whose state was lost or reset since.
type skippingStore struct{ sluice.Store }

func (skippingStore) Refund(context.Context, []sluice.Check, []int64) error { return nil }
