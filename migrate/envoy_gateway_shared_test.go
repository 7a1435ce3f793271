package migrate_test

import (
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedEnvoyGatewaySharedRuleCountsOnce: a global rule with
// shared: true is one bucket across the policy's targets (Envoy Gateway
// 1.3), here two HTTPRoutes of different hosts: one rule with an
// alternative per route, which a route's path on the other's host is not.
// Without shared each route has its own bucket, as before.
func TestImportedEnvoyGatewaySharedRuleCountsOnce(t *testing.T) {
	for shared, want := range map[bool]int{true: 3, false: 4} {
		t.Run(fmt.Sprint("shared ", shared), func(t *testing.T) {
			tr, err := migrate.Import("envoy-gateway", fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: orders}
spec:
  hostnames: [a.example]
  rules: [{matches: [{path: {type: PathPrefix, value: /orders}}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: billing}
spec:
  hostnames: [b.example]
  rules: [{matches: [{path: {type: PathPrefix, value: /billing}}]}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: shop}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: orders}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: billing}
  rateLimit:
    type: Global
    global:
      rules:
      - clientSelectors: [{sourceCIDR: {type: Distinct, value: 0.0.0.0/0}}]
        limit: {requests: 3, unit: Hour}
        shared: %v
`, shared), "eg.yaml")
			if err != nil {
				t.Fatal(err)
			}
			load(t, tr, true)
			h := serveImported(t, tr)
			n := admitted(h, "a.example", "/orders/1", "", "192.0.2.1", 2) + admitted(h, "b.example", "/billing", "", "192.0.2.1", 2)
			if n != want {
				t.Errorf("a.example/orders and b.example/billing: %d of 4 admitted, want %d", n, want)
			}
			expectRequests(t, h, []request{
				{"GET", "a.example", "/billing", "192.0.2.1", 200}, // neither route's
				{"GET", "b.example", "/orders", "192.0.2.1", 200},
			})
			if rules := map[bool]int{true: 1, false: 2}[shared]; len(tr.SluiceRules) != rules {
				t.Errorf("%d rules, want %d: %+v", len(tr.SluiceRules), rules, tr.SluiceRules)
			}
		})
	}
}
