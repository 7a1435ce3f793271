package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice/server"
)

// The dashboard counts the Envoy service's decisions as /metrics does: the
// domain in place of a plan, the refusing rule's limit.
func TestDashboardCountsEnvoyDecisions(t *testing.T) {
	srv := startEnvoy(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 2}\n")
	adminServer := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(adminServer.Close)
	client := envoyClient(t, srv)
	for range 3 { // 2 admitted, 1 refused
		if _, err := client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "198.51.100.1"}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	admin := adminServer.URL
	m := scrape(t, admin)
	_, body := get(t, "GET", admin+"/dashboard/data", "", map[string]string{server.TokenHeader: testToken})
	var d struct {
		Totals struct{ Decisions, Refused int64 }
		Plans  []struct {
			Plan               string
			Decisions, Refused int64
		}
		Limits []struct {
			Plan, Limit string
			Refused     int64
		}
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	limited := m[`sluice_decisions_total{limit="per-ip",policy="edge",result="limited"}`]
	if limited != 1 || float64(d.Totals.Decisions) != m["sluice_decision_seconds_count"] || d.Totals.Refused != 1 ||
		len(d.Plans) != 1 || d.Plans[0].Plan != "edge" || d.Plans[0].Decisions != 3 || d.Plans[0].Refused != 1 ||
		len(d.Limits) != 1 || d.Limits[0].Plan != "edge" || d.Limits[0].Limit != "per-ip" || float64(d.Limits[0].Refused) != limited {
		t.Errorf("/metrics: %v limited, %v decided; the dashboard: %s", limited, m["sluice_decision_seconds_count"], body)
	}
}
