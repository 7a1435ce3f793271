package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// sluice.Refunder: "a receipt given at or before the reset refunds nothing,
// and the state the key counts afresh since keeps its count". A subject's
// quota is shared by two plans under one ID (free: 100 a day, pro: 10 a
// minute, id "quota"). A request of 2 is charged under free, then an
// operator resets the subject (DELETE /v1/keys/{subject}?plan=…, the plan's
// limits): under free and a moment later under pro, or under pro alone;
// the subject spends 2 afresh under free, and ten minutes later the first
// request's 2 are refunded. Redis's reset key lives as long as the state
// key would have, unless it already lives longer (reset.lua), and so does
// the memory store's note of the reset: neither a later Reset under the
// minute's limit nor one that the minute's limit alone times shortens it
// below the day's state, so the refund gives nothing back and 98 are left
// on both stores.
func TestAResetUnderAShorterWindowOfTheIDOutlastsTheReceiptsItForgets(t *testing.T) {
	ctx := context.Background()
	client := redistest.Standalone(t).Client(t)
	free := sluice.FixedWindow(100, 24*time.Hour).Named("free-daily").WithID("quota")
	pro := sluice.FixedWindow(10, time.Minute).Named("pro-minute").WithID("quota")
	for _, tc := range []struct {
		name   string
		resets [][]sluice.Limit
	}{
		{"free then pro", [][]sluice.Limit{{free}, {pro}}},
		{"pro alone", [][]sluice.Limit{{pro}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := fmt.Sprintf("reset-life-%d", time.Now().UnixNano())
			left := map[string]int64{}
			for _, name := range []string{"memory", "redis"} {
				clock := conformance.NewClock(conformance.DefaultStart.Add(time.Hour))
				var s sluice.Store
				var reset func(limits []sluice.Limit)
				if name == "memory" {
					m := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
					t.Cleanup(func() { m.Close() })
					s, reset = m, func(limits []sluice.Limit) { m.Reset(key, limits) }
				} else {
					r := redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))
					s, reset = r, func(limits []sluice.Limit) {
						if _, err := r.Reset(ctx, key, limits); err != nil {
							t.Fatal(err)
						}
					}
				}
				apply := func(cost int64) sluice.Status {
					out := make([]sluice.Status, 1)
					if err := s.Apply(ctx, []sluice.Check{{Key: key, Limit: free, Cost: cost}}, out); err != nil || !out[0].Allowed {
						t.Fatalf("%s: %v %+v", name, err, out[0])
					}
					return out[0]
				}
				receipt := apply(2).Charged // a request in flight
				for _, limits := range tc.resets {
					clock.Advance(time.Second)
					reset(limits)
				}
				clock.Advance(time.Second)
				apply(2) // counted afresh
				clock.Advance(10 * time.Minute)
				if err := s.(sluice.Refunder).Refund(ctx, []sluice.Check{{Key: key, Limit: free, Cost: 2}}, []int64{receipt}); err != nil {
					t.Fatal(err)
				}
				left[name] = apply(0).Remaining
			}
			if left["redis"] != 98 || left["memory"] != 98 {
				t.Errorf("left of the daily 100 after 2 spent since the reset: memory %d, Redis %d; want 98: a receipt from before the reset was refunded into the fresh count",
					left["memory"], left["redis"])
			}
		})
	}
}
