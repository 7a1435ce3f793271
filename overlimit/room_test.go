package overlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// A key the cache remembers as over its limit is never refused by the
// cache once the store would admit the call: after a refund through the
// cache, after Invalidate (an operator's reset), under a limit a reload
// raised (new parameters, no Reset), and for a cheaper cost, which the
// remembered refusal of a larger one says nothing of.
func TestARememberedRefusalNeverOutlivesRoomInTheStore(t *testing.T) {
	l := sluice.FixedWindow(3, time.Hour)
	for _, tc := range []struct {
		name string
		// then makes room, or not, and returns the call to make.
		then func(t *testing.T, r *roomRig, first sluice.Decision) sluice.Check
	}{
		{"a refund", func(t *testing.T, r *roomRig, first sluice.Decision) sluice.Check {
			if err := r.limiter.Refund(context.Background(), []sluice.Check{{Key: "k", Limit: l, Cost: 2}}, &first); err != nil {
				t.Fatal(err)
			}
			return sluice.Check{Key: "k", Limit: l, Cost: 2}
		}},
		{"a reset", func(t *testing.T, r *roomRig, _ sluice.Decision) sluice.Check {
			r.mem.Reset("k", []sluice.Limit{l}) // an operator's reset of the store,
			r.cache.Invalidate("k")             // which tells the cache
			return sluice.Check{Key: "k", Limit: sluice.FixedWindow(3, time.Hour), Cost: 2}
		}},
		{"a limit raised", func(t *testing.T, r *roomRig, _ sluice.Decision) sluice.Check {
			return sluice.Check{Key: "k", Limit: sluice.FixedWindow(6, time.Hour), Cost: 2}
		}},
		{"a cheaper cost", func(t *testing.T, r *roomRig, _ sluice.Decision) sluice.Check {
			return sluice.Check{Key: "k", Limit: l, Cost: 1}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRoomRig(t)
			first, _ := r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 2})
			if d, asked := r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 2}); d.Allowed || !asked {
				t.Fatalf("the refusal to remember: allowed %v, asked %v", d.Allowed, asked)
			}
			if d, asked := r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 2}); d.Allowed || asked {
				t.Fatalf("the remembered refusal: allowed %v, asked %v; want refused by the cache", d.Allowed, asked)
			}
			check := tc.then(t, r, first)
			if d, asked := r.allow(t, check); !d.Allowed || !asked {
				t.Errorf("allowed %v, asked the store %v; the store admits it", d.Allowed, asked)
			}
		})
	}
}

// roomRig is a cacheRig whose store refunds and can be reset.
type roomRig struct {
	cacheRig
	mem *memory.Store
}

// counted is a store that counts its calls and refunds through mem.
type counted struct {
	*storetest.Flaky
	mem *memory.Store
}

func (s counted) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	return s.mem.Refund(ctx, checks, charged)
}

func newRoomRig(t *testing.T) *roomRig {
	r := &roomRig{cacheRig: cacheRig{clk: storetest.NewClock()}}
	r.mem = memory.New(memory.WithClock(r.clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { r.mem.Close() })
	r.store = &storetest.Flaky{Next: r.mem}
	r.cache = overlimit.New(counted{r.store, r.mem}, overlimit.Options{Clock: r.clk.Now})
	r.limiter = sluice.NewLimiter(r.cache)
	return r
}
