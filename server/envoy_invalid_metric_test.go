package server_test

import (
	"context"
	"net/http/httptest"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// An invalid Envoy request (here a descriptor with no entries) is Envoy's
// mistake, answered INVALID_ARGUMENT: it is no failure of the store, so it
// must not reach sluice_undecided_total, whose alert (SluiceUndecided)
// sends an operator to the store.
func TestEnvoyInvalidRequestIsNotUndecided(t *testing.T) {
	srv := startEnvoy(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 2}\n")
	adminServer := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(adminServer.Close)
	client := envoyClient(t, srv)
	_, err := client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge",
		Descriptors: []*ratelimitv3.RateLimitDescriptor{{}}})
	if grpcstatus.Code(err) != codes.InvalidArgument {
		t.Fatalf("a descriptor without entries: %v, want InvalidArgument", err)
	}
	if got := scrape(t, adminServer.URL)["sluice_undecided_total"]; got != 0 {
		t.Errorf("sluice_undecided_total = %v after one invalid request, want 0", got)
	}
}

// Nor is an invalid Envoy request a decision: sluice_decision_seconds
// (whose count job:sluice_requests:rate5m reads as requests decided, and
// job:sluice_fallback_ratio:rate5m divides by) observes the one request
// decided, not the invalid ones answered before any store call.
func TestEnvoyInvalidRequestsAreNoDecisions(t *testing.T) {
	srv := startEnvoy(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 100}\n")
	adminServer := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(adminServer.Close)
	client := envoyClient(t, srv)
	valid := &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{
		{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{entry("remote_address", "10.0.0.1")}}}}
	if _, err := client.ShouldRateLimit(context.Background(), valid); err != nil {
		t.Fatal(err)
	}
	for range 9 {
		_, err := client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{}}})
		if grpcstatus.Code(err) != codes.InvalidArgument {
			t.Fatalf("a descriptor without entries: %v, want InvalidArgument", err)
		}
	}
	if got := scrape(t, adminServer.URL)["sluice_decision_seconds_count"]; got != 1 {
		t.Errorf("one request decided and 9 invalid: sluice_decision_seconds_count = %v, want 1", got)
	}
}
