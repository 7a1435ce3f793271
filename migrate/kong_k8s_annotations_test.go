package migrate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// kongIngressRL is a KongPlugin of 2 requests a minute by address, for an
// Ingress's konghq.com/plugins to name.
const kongIngressRL = `apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: rl, namespace: shop}
plugin: rate-limiting
config: {minute: 2, limit_by: ip, policy: local}
---
`

// TestImportedKongIngressMethods: the Kong Ingress Controller writes the
// methods of an Ingress's konghq.com/methods annotation into each of its
// routes, so Kong runs the Ingress's plugins on requests of those methods
// alone; a request of another method is no route's. The rule matches
// those methods only.
func TestImportedKongIngressMethods(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatKong, kongIngressRL+`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: rl, konghq.com/methods: "post, put"}}
spec:
  rules:
  - host: a.example
    http:
      paths:
      - {path: /orders, pathType: Prefix, backend: {service: {name: orders, port: {number: 80}}}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "a.example", "/orders", "192.0.2.1", 200}, // not a method of the route's: no route of Kong's
		{"GET", "a.example", "/orders", "192.0.2.1", 200},
		{"GET", "a.example", "/orders", "192.0.2.1", 200},
		{"DELETE", "a.example", "/orders", "192.0.2.1", 200},
		{"POST", "a.example", "/orders", "192.0.2.1", 200},
		{"PUT", "a.example", "/orders/1", "192.0.2.1", 200},
		{"POST", "a.example", "/orders", "192.0.2.1", 429}, // 2 a minute
		{"GET", "a.example", "/orders", "192.0.2.1", 200},
	})
}

// TestImportedKongIngressMethodsNotMethods: the controller ignores a
// konghq.com/methods annotation of which one value is not a method
// (letters alone), so the routes match every method; the rule does too,
// and the report says so.
func TestImportedKongIngressMethodsNotMethods(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatKong, kongIngressRL+`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: rl, konghq.com/methods: "POST,get_all"}}
spec:
  rules:
  - host: a.example
    http:
      paths:
      - {path: /orders, pathType: Prefix, backend: {service: {name: orders, port: {number: 80}}}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "a.example", "/orders", "192.0.2.1", 200},
		{"POST", "a.example", "/orders", "192.0.2.1", 200},
		{"DELETE", "a.example", "/orders", "192.0.2.1", 429}, // 2 a minute, every method
	})
	if !reported(tr, "GET_ALL") {
		t.Errorf("the ignored konghq.com/methods annotation is not reported: %+v", tr.Differences)
	}
}

// TestImportedKongIngressHeadersReported: the controller writes an
// Ingress's konghq.com/headers.<name> annotations (comma-separated values)
// into its routes' headers, so Kong runs the Ingress's plugins only on
// requests that carry the header with one of the values. The imported
// rules of Kong's routes do not match headers: the report says so.
func TestImportedKongIngressHeadersReported(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatKong, kongIngressRL+`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: rl, konghq.com/headers.x-tenant: "alpha,bravo"}}
spec:
  rules:
  - host: a.example
    http:
      paths:
      - {path: /orders, pathType: Prefix, backend: {service: {name: orders, port: {number: 80}}}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	if !reported(tr, "also matches headers") {
		t.Errorf("the route's headers, which the rule does not match, are not reported: %+v", tr.Differences)
	}
}

// TestImportedKongIngressDefaultBackend: the controller writes an
// Ingress's spec.defaultBackend as a route of its own, path / on every
// host, to that Service, named <namespace>.<ingress>, and the plugins of
// the Ingress's konghq.com/plugins run on it as on its other routes, each
// route its own count. A request that no other route takes is the default
// route's, and counted there; one another route takes is not.
func TestImportedKongIngressDefaultBackend(t *testing.T) {
	ingress := func(rule string) string {
		return kongIngressRL + `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: rl}}
spec:
  defaultBackend: {service: {name: web, port: {number: 80}}}
  rules:
  - ` + rule + `
    http:
      paths:
      - {path: /orders, pathType: Prefix, backend: {service: {name: orders, port: {number: 80}}}}
`
	}
	t.Run("a rule of every host", func(t *testing.T) {
		tr, err := migrate.Import(migrate.FormatKong, ingress(`host: ""`), "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		load(t, tr, true)
		expectRequests(t, serveImported(t, tr), []request{
			{"GET", "a.example", "/orders", "192.0.2.1", 200}, // the rule's route
			{"GET", "b.example", "/orders/1", "192.0.2.1", 200},
			{"GET", "a.example", "/", "192.0.2.1", 200}, // the default route's
			{"GET", "b.example", "/billing", "192.0.2.1", 200},
			{"GET", "a.example", "/billing", "192.0.2.1", 429}, // 2 a minute
			{"GET", "a.example", "/orders", "192.0.2.1", 429},
		})
	})
	t.Run("a rule of one host", func(t *testing.T) {
		tr, err := migrate.Import(migrate.FormatKong, ingress("host: a.example"), "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		load(t, tr, true)
		expectRequests(t, serveImported(t, tr), []request{
			{"GET", "b.example", "/", "192.0.2.1", 200}, // the default route's
			{"GET", "b.example", "/orders", "192.0.2.1", 200},
			{"GET", "a.example", "/billing", "192.0.2.1", 429}, // 2 a minute
			{"GET", "a.example", "/orders", "192.0.2.2", 200},  // a.example's route
			{"GET", "a.example", "/orders/1", "192.0.2.2", 200},
			{"GET", "a.example", "/orders", "192.0.2.2", 429},
		})
		// a.example/orders is a.example's route's, which the rule of / on
		// every host leaves out on a.example alone (except:).
		if !slices.ContainsFunc(tr.Differences, func(d migrate.Difference) bool {
			return d.Same && strings.Contains(d.Text, "the rule of the plugin on route shop.api leaves those requests out (except:")
		}) {
			t.Errorf("the rule of the default route leaving out a.example/orders is not reported: %+v", tr.Differences)
		}
	})
	t.Run("a second Ingress's default backend", func(t *testing.T) {
		second := "---\n" + strings.ReplaceAll(strings.TrimPrefix(ingress(`host: b.example`), kongIngressRL), "name: api,", "name: other,")
		tr, err := migrate.Import(migrate.FormatKong, ingress(`host: a.example`)+second, "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		load(t, tr, true)
		if !reported(tr, "its spec.defaultBackend is not imported") {
			t.Errorf("the second default backend, which the controller does not route to, is not reported: %+v", tr.Differences)
		}
	})
}
