package migrate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// egGatewayFile is two HTTPRoutes of Gateway eg (a.example/orders and
// b.example/billing), a policy "shop" on the Gateway of 3 an hour per
// address, and more, appended as they are.
func egGatewayFile(shared bool, more string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: orders}
spec:
  parentRefs: [{name: eg}]
  hostnames: [a.example]
  rules: [{matches: [{path: {type: PathPrefix, value: /orders}}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: billing}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: eg}]
  hostnames: [b.example]
  rules: [{matches: [{path: {type: PathPrefix, value: /billing}}]}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: shop}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: eg}]
  rateLimit:
    type: Global
    global:
      rules:
      - clientSelectors: [{sourceCIDR: {type: Distinct, value: 0.0.0.0/0}}]
        limit: {requests: 3, unit: Hour}
        shared: %v
%s`, shared, more)
}

// TestImportedEnvoyGatewayPolicyOnAGatewayCountsPerRoute: Envoy Gateway
// applies a policy that targets a Gateway to each of the Gateway's
// routes, each with a bucket of its own unless the rule is shared, when
// the routes share one. The import reads the HTTPRoutes' parentRefs: a
// rule per route of the Gateway in the file, or one rule with an
// alternative per route when shared.
func TestImportedEnvoyGatewayPolicyOnAGatewayCountsPerRoute(t *testing.T) {
	for shared, want := range map[bool]int{false: 6, true: 3} {
		t.Run(fmt.Sprint("shared ", shared), func(t *testing.T) {
			tr, err := migrate.Import("envoy-gateway", egGatewayFile(shared, ""), "eg.yaml")
			if err != nil {
				t.Fatal(err)
			}
			load(t, tr, true)
			h := serveImported(t, tr)
			n := admitted(h, "a.example", "/orders/1", "", "192.0.2.1", 4) + admitted(h, "b.example", "/billing", "", "192.0.2.1", 4)
			if n != want {
				t.Errorf("a.example/orders ×4 and b.example/billing ×4: %d of 8 admitted, want %d", n, want)
			}
			if n := admitted(h, "a.example", "/elsewhere", "", "192.0.2.1", 4); n != 4 {
				t.Errorf("a.example/elsewhere, neither route's: %d of 4 admitted, want 4", n)
			}
			if !hasDifference(tr, false, "not in the file is not limited") {
				t.Errorf("the report does not say that routes of the Gateway not in the file are not limited: %+v", tr.Differences)
			}
		})
	}
}

// TestImportedEnvoyGatewayRoutePolicyReplacesTheGateways: a route with a
// BackendTrafficPolicy of its own is limited by that policy alone: Envoy
// Gateway puts the policy targeting the route in force there in place of
// the one targeting its Gateway.
func TestImportedEnvoyGatewayRoutePolicyReplacesTheGateways(t *testing.T) {
	tr, err := migrate.Import("envoy-gateway", egGatewayFile(false, `---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: orders-own}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: orders}]
  rateLimit:
    type: Global
    global:
      rules:
      - clientSelectors: [{sourceCIDR: {type: Distinct, value: 0.0.0.0/0}}]
        limit: {requests: 5, unit: Hour}
`), "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/orders", "", "192.0.2.1", 6); n != 5 {
		t.Errorf("a.example/orders: %d of 6 admitted, want its own policy's 5", n)
	}
	if n := admitted(h, "b.example", "/billing", "", "192.0.2.1", 4); n != 3 {
		t.Errorf("b.example/billing: %d of 4 admitted, want the Gateway policy's 3", n)
	}
	if !hasDifference(tr, true, "of its own") {
		t.Errorf("the report does not say the route's own policy replaces the Gateway's: %+v", tr.Differences)
	}
}

// TestImportedEnvoyGatewayPolicyOnAGatewayWithoutRoutes: a Gateway none
// of whose routes is in the file is a target of every request, one count,
// reported.
func TestImportedEnvoyGatewayPolicyOnAGatewayWithoutRoutes(t *testing.T) {
	src := strings.Replace(egGatewayFile(false, ""), "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: eg}]",
		"targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: other}]", 1)
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	n := admitted(h, "a.example", "/orders", "", "192.0.2.1", 2) + admitted(h, "c.example", "/x", "", "192.0.2.1", 2)
	if n != 3 {
		t.Errorf("a.example/orders ×2 and c.example/x ×2: %d of 4 admitted, want 3 (one count of every request)", n)
	}
	if !hasDifference(tr, false, "keeps a count per route") {
		t.Errorf("the report does not say Envoy Gateway keeps a count per route: %+v", tr.Differences)
	}
}

// TestImportedEnvoyGatewayGatewayOfAnotherNamespace: a route attached to
// Gateway eg of namespace shop is not a route of a policy of namespace
// web that targets web's Gateway eg.
func TestImportedEnvoyGatewayGatewayOfAnotherNamespace(t *testing.T) {
	src := strings.Replace(egGatewayFile(false, ""), "metadata: {name: shop}", "metadata: {name: shop, namespace: web}", 1)
	src = strings.Replace(src, "parentRefs: [{name: eg}]", "parentRefs: [{name: eg, namespace: shop}]", 1)
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/orders", "", "192.0.2.1", 4); n != 4 {
		t.Errorf("a.example/orders, a route of shop's Gateway eg: %d of 4 admitted, want 4 (web's policy is not its)", n)
	}
	if n := admitted(h, "b.example", "/billing", "", "192.0.2.1", 4); n != 3 {
		t.Errorf("b.example/billing, a route of eg in the policy's namespace: %d of 4 admitted, want 3", n)
	}
}
