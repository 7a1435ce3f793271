package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongIngressMatchesItsHosts: the Kong Ingress Controller
// writes a route per host of an Ingress and backend Service, with the
// rule's host in the route's hosts, so Kong runs the plugins of the
// Ingress's konghq.com/plugins on requests to that host alone, each route
// its own count, and a Service's plugins on its routes of every host
// together. The rules match each route's host: a request to b.example is
// not a.example's route's, and a path of one host is not another host's.
func TestImportedKongIngressMatchesItsHosts(t *testing.T) {
	const plugins = `apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: rl, namespace: shop}
plugin: rate-limiting
config: {minute: 2, limit_by: ip, policy: local}
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: svc-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 3, limit_by: ip, policy: local}
---
`
	t.Run("an Ingress of one host", func(t *testing.T) {
		tr, err := migrate.Import(migrate.FormatKong, plugins+`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: rl}}
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
			{"GET", "b.example", "/orders", "192.0.2.1", 200}, // no route of Kong's: not the rule's
			{"GET", "b.example", "/orders", "192.0.2.1", 200},
			{"GET", "b.example", "/orders", "192.0.2.1", 200},
			{"GET", "a.example", "/orders", "192.0.2.1", 200},
			{"GET", "a.example", "/orders/1", "192.0.2.1", 200},
			{"GET", "a.example", "/orders", "192.0.2.1", 429}, // 2 a minute
		})
		if reported(tr, "Hosts are not matched") {
			t.Errorf("reported that hosts are not matched: %+v", tr.Differences)
		}
	})
	t.Run("a Service's routes of different hosts and paths", func(t *testing.T) {
		tr, err := migrate.Import(migrate.FormatKong, plugins+`apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: svc-rl}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop}
spec:
  rules:
  - host: a.example
    http:
      paths:
      - {path: /orders, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
  - host: b.example
    http:
      paths:
      - {path: /billing, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`, "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		load(t, tr, true)
		expectRequests(t, serveImported(t, tr), []request{
			{"GET", "a.example", "/billing", "192.0.2.1", 200}, // no route of Kong's
			{"GET", "b.example", "/orders", "192.0.2.1", 200},
			{"GET", "a.example", "/billing", "192.0.2.1", 200},
			{"GET", "b.example", "/orders", "192.0.2.1", 200},
			{"GET", "a.example", "/orders", "192.0.2.1", 200},
			{"GET", "b.example", "/billing", "192.0.2.1", 200},
			{"GET", "a.example", "/orders/1", "192.0.2.1", 200},
			{"GET", "b.example", "/billing", "192.0.2.1", 429}, // the Service's 3, across its routes
			{"GET", "a.example", "/orders", "192.0.2.1", 429},
		})
	})
	t.Run("an Ingress's hosts of one path", func(t *testing.T) {
		tr, err := migrate.Import(migrate.FormatKong, plugins+`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: rl}}
spec:
  rules:
  - host: a.example
    http:
      paths:
      - {path: /orders, pathType: Prefix, backend: {service: {name: orders, port: {number: 80}}}}
  - host: b.example
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
			{"GET", "a.example", "/orders", "192.0.2.1", 200},
			{"GET", "b.example", "/orders", "192.0.2.1", 200}, // a route of its own: the plugin's instance on it counts apart
			{"GET", "b.example", "/orders", "192.0.2.1", 200},
			{"GET", "a.example", "/orders", "192.0.2.1", 429},
			{"GET", "b.example", "/orders", "192.0.2.1", 429},
			{"GET", "c.example", "/orders", "192.0.2.1", 200}, // no route of Kong's
		})
	})
}

// TestImportedKongIngressExactPath: the Kong Ingress Controller writes an
// Exact path as the regular expression ~/orders$, which Kong anchors at
// the path's start: the path alone. The rule matches it alone, on the
// route's host.
func TestImportedKongIngressExactPath(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatKong, `apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: rl, namespace: shop}
plugin: rate-limiting
config: {minute: 2, limit_by: ip, policy: local}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: rl}}
spec:
  rules:
  - host: a.example
    http:
      paths:
      - {path: /orders, pathType: Exact, backend: {service: {name: orders, port: {number: 80}}}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "a.example", "/orders/1", "192.0.2.1", 200}, // below the path: no route of Kong's
		{"GET", "a.example", "/orders/2", "192.0.2.1", 200},
		{"GET", "a.example", "/orders/3", "192.0.2.1", 200},
		{"GET", "b.example", "/orders", "192.0.2.1", 200}, // another host: no route of Kong's
		{"GET", "b.example", "/orders", "192.0.2.1", 200},
		{"GET", "b.example", "/orders", "192.0.2.1", 200},
		{"GET", "a.example", "/orders", "192.0.2.1", 200},
		{"GET", "a.example", "/orders", "192.0.2.1", 200},
		{"GET", "a.example", "/orders", "192.0.2.1", 429}, // 2 a minute
	})
	if reported(tr, "regular-expression path") {
		t.Errorf("reported the Exact path as a regular expression not limited: %+v", tr.Differences)
	}
}
