package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestDetectJSON: decK dumps (deck gateway dump --format json) and
// kubectl get -o json print the same resources as JSON; the import reads
// JSON as the YAML it is, and Detect knows each format in it.
func TestDetectJSON(t *testing.T) {
	for _, c := range []struct{ format, src string }{
		{"kong", `{
  "_format_version": "3.0",
  "services": [{"name": "api", "url": "http://api.internal",
    "routes": [{"name": "api", "paths": ["/api"]}],
    "plugins": [{"name": "rate-limiting", "config": {"minute": 5, "limit_by": "ip"}}]}]
}`},
		{"kong", `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "configuration.konghq.com/v1", "kind": "KongClusterPlugin",
   "metadata": {"name": "rl", "labels": {"global": "true"}},
   "plugin": "rate-limiting", "config": {"minute": 5, "limit_by": "ip"}}]}`},
		{"envoy-gateway", `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "BackendTrafficPolicy",
   "metadata": {"name": "edge"},
   "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "eg"}],
            "rateLimit": {"type": "Global", "global": {"rules": [{"limit": {"requests": 10, "unit": "Second"}}]}}}}]}`},
		{"traefik", `{"apiVersion": "traefik.io/v1alpha1", "kind": "Middleware",
 "metadata": {"name": "rl"}, "spec": {"rateLimit": {"average": 10, "burst": 20}}}`},
	} {
		got, ok := migrate.Detect(c.src)
		if !ok || got != c.format {
			t.Errorf("%.60q: Detect = %q (%v), want %s", c.src, got, ok, c.format)
		}
		if _, err := migrate.Import(c.format, c.src, "dump.json"); err != nil {
			t.Errorf("%.60q: %v", c.src, err)
		}
	}
}
