package envoy_test

import (
	"context"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice/memory"
)

// A limit override's window is unit × unit_multiplier, chosen by whoever
// calls the service, and each window is a limit of its own in the store,
// which keeps it while it lives. Windows are bounded: a multiplier above
// 60 is InvalidArgument, so that requests make at most 60 override limits
// of each unit (and as many of blocked ones), whatever they send.
func TestOverrideWindowsAreBounded(t *testing.T) {
	h := serve(t, apiRules)
	mem := h.store.Store.(*memory.Store)
	before := mem.Stats().Limits
	for m := uint32(1); m <= 300; m++ {
		for _, rpu := range []uint32{5, 0} {
			d := desc("client", "c")
			d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: rpu, Unit: typev3.RateLimitUnit_SECOND,
				UnitMultiplier: wrapperspb.UInt32(m)}
			_, err := h.client.ShouldRateLimit(context.Background(), request("api", 0, d))
			if got, want := grpcstatus.Code(err), codes.OK; m > 60 {
				if got != codes.InvalidArgument {
					t.Fatalf("an override of %d seconds: %v, want InvalidArgument", m, err)
				}
			} else if got != want {
				t.Fatalf("an override of %d seconds: %v", m, err)
			}
		}
	}
	if grown := mem.Stats().Limits - before; grown > 2*60 {
		t.Errorf("override windows of 1 to 300 seconds made %d limits in the store, more than 120", grown)
	}
}
