package envoy_test

import (
	"context"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/sluice-dev/sluice/envoy"
)

// Two identical descriptors with limit overrides of one window and
// different quantities share one check (bind). When the store refuses that
// check for want of room (sluice.Status.NoRoom), nothing was counted:
// readPast does not peek at the widest quantity (the window is empty, no
// state was kept, which tells nothing of the client's use), and each
// descriptor is OVER_LIMIT with no limit_remaining, whatever its own
// quantity, as response's doc says of such a status.
func TestARefusalForWantOfRoomOfIdenticalOverridesTellsNoRemaining(t *testing.T) {
	var got []envoy.Outcome
	svc, store := serveRoomless(t, apiRules, &got)
	store.full.Store(true)
	d1, d2 := desc("client", "new"), desc("client", "new")
	d1.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 10, Unit: typev3.RateLimitUnit_MINUTE}
	d2.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 20, Unit: typev3.RateLimitUnit_MINUTE}
	resp, err := svc.ShouldRateLimit(context.Background(), request("api", 0, d1, d2))
	if err != nil {
		t.Fatal(err)
	}
	if resp.OverallCode != over {
		t.Fatalf("overall %v, want OVER_LIMIT for want of room", resp.OverallCode)
	}
	for i, st := range resp.Statuses {
		if st.Code != over || st.LimitRemaining != 0 {
			t.Errorf("descriptor %d (refused for want of room): %v; want OVER_LIMIT with no limit_remaining", i, st)
		}
	}
	if len(got) != 2 {
		t.Fatalf("outcomes: %+v, want 2", got)
	}
	for i, o := range got {
		if !o.NoRoom || o.Remaining != 0 {
			t.Errorf("outcome %d: %+v, want NoRoom with nothing remaining", i, o)
		}
	}
}
