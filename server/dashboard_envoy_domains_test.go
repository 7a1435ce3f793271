package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice/server"
)

// The dashboard's plans hold the Envoy domains the rules configure, not
// every domain a caller names: an unknown domain is answered OK without
// deciding anything (docs/envoy.md), and a caller naming 1,100 of them
// would fill the table's bounded rows (1,024), every poll carrying the
// junk, and leave no row for a configured domain decided after them.
func TestDashboardPlansHoldOnlyConfiguredEnvoyDomains(t *testing.T) {
	srv := startEnvoy(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 1}\n")
	adminServer := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(adminServer.Close)
	client := envoyClient(t, srv)
	desc := []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "198.51.100.1"}}}}
	for i := range 1100 {
		if _, err := client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: fmt.Sprintf("made-up-%d", i), Descriptors: desc}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // the configured domain: 1 admitted, 1 refused
		if _, err := client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: desc}); err != nil {
			t.Fatal(err)
		}
	}
	_, body := get(t, "GET", adminServer.URL+"/dashboard/data", "", map[string]string{server.TokenHeader: testToken})
	var d struct {
		Plans []struct {
			Plan               string
			Decisions, Refused int64
		}
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	var edge bool
	for _, p := range d.Plans {
		edge = edge || p.Plan == "edge"
	}
	if len(d.Plans) > 1 || !edge {
		t.Errorf("the dashboard lists %d plans (%d bytes of data), the configured domain edge among them: %v; want edge alone",
			len(d.Plans), len(body), edge)
	}
}
