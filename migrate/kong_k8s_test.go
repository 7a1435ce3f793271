package migrate_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// kongK8s is a Kong Ingress Controller set-up: a global KongClusterPlugin,
// a KongPlugin on one Ingress, another on a Service, a KongConsumer with
// its own plugin and a key-auth Secret.
const kongK8s = `apiVersion: configuration.konghq.com/v1
kind: KongClusterPlugin
metadata:
  name: global-rl
  labels: {global: "true"}
  annotations: {kubernetes.io/ingress.class: kong}
plugin: rate-limiting
config: {minute: 100, policy: local}
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: search-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 2, policy: local}
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: orders-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 3, policy: local}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  namespace: shop
  annotations: {konghq.com/plugins: search-rl}
spec:
  ingressClassName: kong
  rules:
    - http:
        paths:
          - {path: /search, pathType: Prefix, backend: {service: {name: search, port: {number: 80}}}}
          - {path: /orders, pathType: Prefix, backend: {service: {name: orders, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata:
  name: orders
  namespace: shop
  annotations: {konghq.com/plugins: orders-rl}
spec: {ports: [{port: 80}]}
---
apiVersion: configuration.konghq.com/v1
kind: KongConsumer
metadata:
  name: acme
  namespace: shop
  annotations: {konghq.com/plugins: "acme-rl, missing-rl"}
username: acme
credentials: [acme-key]
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: acme-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 1000, limit_by: consumer}
---
apiVersion: v1
kind: Secret
metadata:
  name: acme-key
  namespace: shop
  labels: {konghq.com/credential: key-auth}
stringData: {key: acme-secret-key}
`

// TestImportKongIngressController reads the Kong Ingress Controller's
// resources as the controller applies them: the global plugin everywhere,
// the Ingress's on both its paths, the Service's on the route to it, the
// consumer's plan chosen by its Secret's key (by SHA-256); a plugin the
// file does not hold is reported.
func TestImportKongIngressController(t *testing.T) {
	if f, ok := migrate.Detect(kongK8s); !ok || f != migrate.FormatKong {
		t.Errorf("Detect: %q %v", f, ok)
	}
	tr, err := migrate.Import(migrate.FormatKong, kongK8s, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, tr, true)
	files, err := tr.Files(true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range cfg.Rules {
		got = append(got, r.Name+" "+strings.Join(r.Paths, ",")+" "+r.Limits[0].String())
	}
	want := []string{
		"global  per-minute: fixed-window 100 per 1m0s",
		"shop.api.search /search,/search/ per-minute: fixed-window 2 per 1m0s",
		"shop.api.orders /orders,/orders/ per-minute: fixed-window 2 per 1m0s",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rules:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), files[migrate.ConfigFile])
	}
	sum := sha256.Sum256([]byte("acme-secret-key"))
	if k := cfg.Keys[sum]; k == nil || k.Plan == nil {
		t.Errorf("the consumer's key %s is not listed with a plan:\n%s", hex.EncodeToString(sum[:]), files[migrate.ConfigFile])
	}
	if strings.Contains(files[migrate.ConfigFile], "acme-secret-key") {
		t.Error("the configuration holds the key in clear")
	}
	if !strings.Contains(tr.Report(), "names plugin missing-rl, which the file does not hold") {
		t.Error("the report does not name the missing plugin")
	}

	h := serveImported(t, tr)
	status := func(path string) int {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if a, b, c := status("/search"), status("/search/x"), status("/search"); a != 200 || b != 200 || c != 429 {
		t.Errorf("/search: %d %d %d, want 200 200 429 (the Ingress plugin's 2 a minute)", a, b, c)
	}
	if code := status("/other"); code != 200 {
		t.Errorf("/other: %d, want 200 (the global 100 a minute only)", code)
	}
}

// TestImportKongIngressControllerConsumerGroups: a KongConsumerGroup's
// plugin is the plan of the KongConsumers that name the group; the rules
// of the Ingress's plugin leave them alone, as the controller's Kong runs
// the group's plugin in place of the route's (a plugin of the same name).
func TestImportKongIngressControllerConsumerGroups(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatKong, `apiVersion: configuration.konghq.com/v1
kind: KongClusterPlugin
metadata: {name: global-rl, labels: {global: "true"}}
plugin: rate-limiting
config: {minute: 1000}
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: search-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 1, limit_by: ip}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: search-rl}}
spec:
  rules: [{http: {paths: [{path: /search, pathType: Prefix, backend: {service: {name: search}}}]}}]
---
apiVersion: configuration.konghq.com/v1beta1
kind: KongConsumerGroup
metadata: {name: gold, namespace: shop, annotations: {konghq.com/plugins: gold-rl}}
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: gold-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 3}
---
apiVersion: configuration.konghq.com/v1
kind: KongConsumer
metadata: {name: carol, namespace: shop}
username: carol
credentials: [carol-key]
consumerGroups: [gold]
---
apiVersion: v1
kind: Secret
metadata: {name: carol-key, namespace: shop, labels: {konghq.com/credential: key-auth}}
stringData: {key: carol-secret}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, tr, true)
	if k := cfg.Keys[sha256.Sum256([]byte("carol-secret"))]; k == nil || k.Plan.Name != "group-shop.gold" {
		t.Fatalf("carol's key: %+v, want plan group-shop.gold", k)
	}
	h := serveImported(t, tr)
	var got []int
	for range 4 {
		got = append(got, sendKey(h, "/search", "carol-secret", "192.0.2.1"))
	}
	got = append(got, sendKey(h, "/search", "", "192.0.2.2"), sendKey(h, "/search", "", "192.0.2.2"))
	if want := []int{200, 200, 200, 429, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("carol ×4, then an address ×2 on /search: %v, want %v (the group's 3, the Ingress's 1)", got, want)
	}
}
