package envoy_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	ratelimitfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// The Envoy bootstrap of examples/envoy is a valid Envoy v3 configuration
// (decoded and validated with Envoy's own protos), its rate limit filter asks
// for a domain of ratelimit-config.yaml from the sluice cluster, and the
// descriptors its actions produce are limited by that file.
func TestExampleEnvoyBootstrapMatchesTheRules(t *testing.T) {
	var doc any
	if err := yaml.Unmarshal(must(os.ReadFile("../examples/envoy/envoy.yaml")), &doc); err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(must(json.Marshal(doc)), &b); err != nil {
		t.Fatal(err)
	}
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
	var rl ratelimitfilterv3.RateLimit
	if err := hcm.GetHttpFilters()[0].GetTypedConfig().UnmarshalTo(&rl); err != nil {
		t.Fatal(err)
	}
	if err := rl.ValidateAll(); err != nil {
		t.Fatal(err)
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

	// What the virtual host's actions send, for a client at 203.0.113.7
	// with an API key, on /login.
	actions := hcm.GetRouteConfig().GetVirtualHosts()[0].GetRateLimits()
	if len(actions) != 3 {
		t.Fatalf("%d rate limit action groups", len(actions))
	}
	h := serve(t, string(must(os.ReadFile("../examples/envoy/ratelimit-config.yaml"))))
	resp := h.ask(request(rl.GetDomain(), 0,
		desc("remote_address", "203.0.113.7"),
		desc("remote_address", "203.0.113.7", "path", "/login"),
		desc("api_key", "4f3c…")))
	for i, want := range []string{"per-ip", "login", "per-key"} {
		if got := resp.Statuses[i].GetCurrentLimit().GetName(); got != want {
			t.Errorf("descriptor %d limited by %q, want %q", i, got, want)
		}
	}
}
