package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongIngressV1beta1Backends: an Ingress of
// networking.k8s.io/v1beta1 or extensions/v1beta1 names its Services as
// backend: {serviceName, servicePort}, its default backend as
// spec.backend. The controller reads them as it reads v1's
// spec.defaultBackend and backend.service: the default backend is a
// route of / on every host under the Ingress's plugins, each route its
// own count (2 a minute by address), and each path goes to its Service.
func TestImportedKongIngressV1beta1Backends(t *testing.T) {
	for _, api := range []string{"networking.k8s.io/v1beta1", "extensions/v1beta1"} {
		t.Run(api, func(t *testing.T) {
			tr, err := migrate.Import(migrate.FormatKong, kongIngressRL+`apiVersion: `+api+`
kind: Ingress
metadata: {name: api, namespace: shop, annotations: {konghq.com/plugins: rl}}
spec:
  backend: {serviceName: web, servicePort: 80}
  rules:
  - http:
      paths:
      - {path: /orders, backend: {serviceName: orders, servicePort: 80}}
`, "kong.yaml")
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
			var names []string
			for _, r := range tr.SluiceRules {
				names = append(names, r.Name)
			}
			if got := strings.Join(names, " "); !strings.Contains(got, "orders") {
				t.Errorf("no rule names the route to Service orders: %s", got)
			}
		})
	}
}
