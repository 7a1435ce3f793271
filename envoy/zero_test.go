package envoy_test

import (
	"context"
	"strings"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/envoy"
)

// The zero Service has no limiter: it answers Unavailable, which Envoy's
// failure_mode_deny turns into its own decision, and never panics.
func TestZeroServiceIsUnavailable(t *testing.T) {
	var s envoy.Service
	if s.Rules() != nil {
		t.Error("Rules of the zero Service: not nil")
	}
	req := &rlsv3.RateLimitRequest{Domain: "edge"}
	_, err := s.ShouldRateLimit(context.Background(), req)
	if grpcstatus.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "make one with NewService") {
		t.Errorf("ShouldRateLimit: %v, want Unavailable naming the constructor", err)
	}
	s.SetRules(nil)
	if s.Rules() == nil {
		t.Error("Rules after SetRules(nil): nil, want empty rules")
	}
}
