package envoy_test

import (
	"slices"
	"testing"
	"time"

	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// The Envoy bootstrap of examples/envoy is a valid Envoy v3 configuration
// (decoded and validated with Envoy's own protos), its rate limit filter asks
// for a domain of ratelimit-config.yaml from the sluice cluster, and the
// descriptors its routes and actions produce are limited by that file: on
// /login by per-ip, login and (for a verified API key) per-key, under
// /static/ by per-ip and the unlimited rule.
func TestExampleEnvoyBootstrapMatchesTheRules(t *testing.T) {
	b := exampleBootstrap(t)
	if err := b.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	var hcm hcmv3.HttpConnectionManager
	if err := b.GetStaticResources().GetListeners()[0].GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(&hcm); err != nil {
		t.Fatal(err)
	}
	if err := hcm.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	edge := exampleEdge(t)
	rl := edge.rl
	if err := rl.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	for _, f := range hcm.GetHttpFilters() {
		if err := must(f.GetTypedConfig().UnmarshalNew()).(interface{ ValidateAll() error }).ValidateAll(); err != nil {
			t.Errorf("http filter %s: %v", f.GetName(), err)
		}
	}
	cluster := rl.GetRateLimitService().GetGrpcService().GetEnvoyGrpc().GetClusterName()
	found := false
	for _, c := range b.GetStaticResources().GetClusters() {
		found = found || c.GetName() == cluster
	}
	if !found || rl.GetDomain() != "edge" {
		t.Errorf("filter asks domain %q of cluster %q (defined: %v)", rl.GetDomain(), cluster, found)
	}
	if rl.GetTimeout().AsDuration() <= 500*time.Millisecond {
		t.Errorf("filter timeout %v is not above the rules' longest max_wait (500ms)", rl.GetTimeout().AsDuration())
	}

	// What a client at 203.0.113.7, whose API key the operator's filter
	// verified, is limited by.
	h := exampleRules(t)
	for _, c := range []struct {
		target string
		want   []string
	}{
		{"/login", []string{"login", "per-ip", "per-key"}},
		{"/static/app.js", []string{"none", "per-ip", "per-key"}},
		{"/api/orders", []string{"per-ip", "per-key"}},
	} {
		r := edgeRequest{peer: "203.0.113.7", target: c.target, verified: map[string]string{"x-api-key-sha256": "4f3c…"}}
		got := limitNames(edge.decide(h, r))
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: limited by %q, want %q", c.target, got, c.want)
		}
	}
}
