package envoy_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// A window that went over is marked over (its over-limit record, or a
// requests_per_unit 0 rule's record of hits) in the store's window,
// whatever the offset of the service's clock from the store's (the docs
// allow up to 5 s): a refusal just after the store's window turned is
// marked in the new window, even when the service's clock has not turned
// yet or turned before the last refusal of the old one. So a peek
// (hits_addend 0) at it then is OVER_LIMIT, as envoyproxy/ratelimit's
// counter says.
func TestWindowsMarkedOverAreTheStoresWhateverTheServicesClock(t *testing.T) {
	cases := []struct {
		name string
		rule string
		// skew is the service's clock less the store's; before is how long
		// before the end of the store's window the first window is used.
		skew, before, window time.Duration
	}{
		{"a minute, the service 2s ahead", "{unit: minute, requests_per_unit: 1}", 2 * time.Second, time.Second, time.Minute},
		{"a minute, the service 2s behind", "{unit: minute, requests_per_unit: 1}", -2 * time.Second, 3 * time.Second, time.Minute},
		{"a second, the service 0.5s ahead", "{unit: second, requests_per_unit: 1}", 500 * time.Millisecond, 300 * time.Millisecond, time.Second},
		{"a blocked minute, the service 2s ahead", "{unit: minute, requests_per_unit: 0}", 2 * time.Second, time.Second, time.Minute},
		{"a blocked minute, the service 2s behind", "{unit: minute, requests_per_unit: 0}", -2 * time.Second, 3 * time.Second, time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rules, err := envoy.LoadRules("rules.yaml", []byte("domain: api\ndescriptors:\n  - key: client\n    rate_limit: "+c.rule+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			store := &fakeClock{}
			store.us.Store(sluice.MicrosSinceEpoch(start.Add(c.window - c.before)))
			mem := memory.New(memory.WithClock(store.Now), memory.WithSweepInterval(0))
			defer mem.Close()
			svc, err := envoy.NewService(sluice.NewLimiter(mem), rules, envoy.Options{
				Clock: func() time.Time { return store.Now().Add(c.skew) }})
			if err != nil {
				t.Fatal(err)
			}
			h := &harness{t: t, clock: store, svc: svc, client: dial(t, svc)}
			for _, when := range []string{"the window", "the next window"} {
				h.ask(request("api", 0, desc("client", "c")))
				if resp := h.ask(request("api", 0, desc("client", "c"))); resp.OverallCode != over {
					t.Fatalf("%s: a hit over the limit: %v", when, resp)
				}
				if st := statusOf(h.ask(request("api", 0, withHits(desc("client", "c"), 0))).Statuses[0]); st.code != over {
					t.Errorf("%s: a peek at it once it went over: %+v, want OVER_LIMIT", when, st)
				}
				store.Advance(c.before + c.window/60) // just into the store's next window
			}
		})
	}
}
