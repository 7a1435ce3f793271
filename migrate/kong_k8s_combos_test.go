package migrate_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongIngressControllerPluginOfAConsumerAndAnIngress: the Kong
// Ingress Controller makes one plugin of a KongPlugin that a KongConsumer
// and an Ingress both name, for that consumer on that Ingress's routes
// only (its ForeignRelations.GetCombinations: consumer and route, never
// the route alone nor the consumer alone). The import must make it acme's
// rule on /api: acme is limited to one a minute there, bob, another
// consumer, is not limited by it, and acme is not limited elsewhere.
func TestImportedKongIngressControllerPluginOfAConsumerAndAnIngress(t *testing.T) {
	tr, err := migrate.Import("kong", `apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: auth, namespace: shop}
plugin: key-auth
config: {key_in_query: false}
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: acme-api-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 1, policy: local}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  namespace: shop
  annotations: {konghq.com/plugins: "auth, acme-api-rl"}
spec:
  ingressClassName: kong
  rules:
    - http:
        paths:
          - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
---
apiVersion: configuration.konghq.com/v1
kind: KongConsumer
metadata:
  name: acme
  namespace: shop
  annotations: {konghq.com/plugins: acme-api-rl, kubernetes.io/ingress.class: kong}
username: acme
credentials: [acme-key]
---
apiVersion: v1
kind: Secret
metadata:
  name: acme-key
  namespace: shop
  labels: {konghq.com/credential: key-auth}
stringData: {key: acme-secret}
---
apiVersion: configuration.konghq.com/v1
kind: KongConsumer
metadata:
  name: bob
  namespace: shop
  annotations: {kubernetes.io/ingress.class: kong}
username: bob
credentials: [bob-key]
---
apiVersion: v1
kind: Secret
metadata:
  name: bob-key
  namespace: shop
  labels: {konghq.com/credential: key-auth}
stringData: {key: bob-secret}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	if a, b := sendKey(h, "/api/x", "bob-secret", "192.0.2.1"), sendKey(h, "/api/x", "bob-secret", "192.0.2.1"); a != 200 || b != 200 {
		t.Errorf("bob twice on /api: %d, %d; the plugin is acme's on /api only, bob is not limited", a, b)
	}
	if a, b := sendKey(h, "/api/x", "acme-secret", "192.0.2.2"), sendKey(h, "/api/x", "acme-secret", "192.0.2.2"); a != 200 || b != 429 {
		t.Errorf("acme twice on /api: %d, %d; want 200, 429 (the plugin's one a minute for acme there)", a, b)
	}
	if a := sendKey(h, "/other", "acme-secret", "192.0.2.2"); a != 200 {
		t.Errorf("acme on /other, off the Ingress: %d, want 200", a)
	}
}

// TestImportedKongIngressHostAliases: the Kong Ingress Controller adds the
// names of an Ingress's konghq.com/host-aliases annotation to the hosts of
// each route it writes of a rule with a host, so Kong runs the route's
// plugins on b.example too: the rule must match b.example as it matches
// a.example, and not c.example.
func TestImportedKongIngressHostAliases(t *testing.T) {
	tr, err := migrate.Import("kong", `apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: api-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 1, limit_by: ip, policy: local}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  namespace: shop
  annotations: {konghq.com/plugins: api-rl, konghq.com/host-aliases: b.example}
spec:
  ingressClassName: kong
  rules:
    - host: a.example
      http:
        paths:
          - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	send := func(host string) int {
		r := httptest.NewRequest("GET", "http://"+host+"/api/x", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if a, b := send("b.example"), send("b.example"); a != 200 || b != 429 {
		t.Errorf("b.example/api/x twice: %d, %d; want 200, 429 (the route matches the alias b.example)", a, b)
	}
	if a, b := send("c.example"), send("c.example"); a != 200 || b != 200 {
		t.Errorf("c.example/api/x twice: %d, %d; want 200, 200 (no route of c.example)", a, b)
	}
}

// TestImportKongIngressControllerPluginOfAConsumerOnSomeRoutesIsReported:
// a KongPlugin that a KongConsumer and one Ingress name runs on the
// consumer's requests to that Ingress's route only; another Ingress's route
// to the same Service runs without it. The import makes such plugins a
// rule of the consumer on a Service's routes, which would take the other
// route too: it must report the plugin as not imported, and limit acme on
// neither route by it (the global plugin's 100 a minute alone).
func TestImportKongIngressControllerPluginOfAConsumerOnSomeRoutesIsReported(t *testing.T) {
	tr, err := migrate.Import("kong", `apiVersion: configuration.konghq.com/v1
kind: KongClusterPlugin
metadata: {name: global-rl, labels: {global: "true"}}
plugin: rate-limiting
config: {minute: 100, policy: local}
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: auth, namespace: shop}
plugin: key-auth
config: {key_in_query: false}
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: acme-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 1, policy: local}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: "auth, acme-rl"}}
spec:
  rules: [{http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: other, namespace: shop, annotations: {konghq.com/plugins: auth}}
spec:
  rules: [{http: {paths: [{path: /other, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}}]
---
apiVersion: configuration.konghq.com/v1
kind: KongConsumer
metadata: {name: acme, namespace: shop, annotations: {konghq.com/plugins: acme-rl}}
username: acme
credentials: [acme-key]
---
apiVersion: v1
kind: Secret
metadata: {name: acme-key, namespace: shop, labels: {konghq.com/credential: key-auth}}
stringData: {key: acme-secret}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reported := false
	for _, d := range tr.Differences {
		reported = reported || !d.Same && strings.Contains(d.Where, "KongPlugin shop/acme-rl of KongConsumer acme") && strings.Contains(d.Text, "not imported")
	}
	if !reported {
		t.Error("no difference says the consumer's plugin on some of the Service's routes is not imported")
		for _, d := range tr.Differences {
			t.Logf("%v %s: %s", d.Same, d.Where, d.Text)
		}
	}
	h := serveImported(t, tr)
	for _, path := range []string{"/api/x", "/other/x"} {
		if a, b := sendKey(h, path, "acme-secret", "192.0.2.1"), sendKey(h, path, "acme-secret", "192.0.2.1"); a != 200 || b != 200 {
			t.Errorf("acme twice on %s: %d, %d; want 200, 200 (the plugin is not imported; the global 100 a minute)", path, a, b)
		}
	}
}
