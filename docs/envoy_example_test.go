package docs_test

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestEnvoyExampleSendsACallerToken: the Envoy bootstrap of examples/envoy
// (docs/envoy.md) reaches sluice's Envoy listener from another host, where
// no loopback scope applies, so its rate limit service must send a caller
// token in the metadata sluice reads (sluice-token, or authorization:
// Bearer). Without one every call is refused UNAUTHENTICATED, and the
// filter, failing open, limits nothing.
func TestEnvoyExampleSendsACallerToken(t *testing.T) {
	b, err := os.ReadFile("../examples/envoy/envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var services []map[string]any
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if rls, ok := v["rate_limit_service"].(map[string]any); ok {
				if gs, ok := rls["grpc_service"].(map[string]any); ok {
					services = append(services, gs)
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	if len(services) == 0 {
		t.Fatal("examples/envoy/envoy.yaml has no rate_limit_service.grpc_service")
	}
	for _, gs := range services {
		found := false
		md, _ := gs["initial_metadata"].([]any)
		for _, e := range md {
			h, _ := e.(map[string]any)
			key, _ := h["key"].(string)
			value, _ := h["value"].(string)
			switch strings.ToLower(key) {
			case "sluice-token":
				found = found || value != ""
			case "authorization":
				found = found || len(value) > 7 && strings.EqualFold(value[:7], "bearer ")
			}
		}
		if !found {
			t.Errorf("examples/envoy/envoy.yaml: the rate limit service %v sends no caller token (initial_metadata sluice-token or authorization: Bearer): sluice refuses its calls, and the filter lets every request through", gs)
		}
	}
}
