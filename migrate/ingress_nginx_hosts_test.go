package migrate_test

import (
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedIngressNginxHostsOfDifferentPathsCountOnce: an Ingress's
// limit-rpm is one zone that ingress-nginx writes into the locations of
// every host of the Ingress, so a client counts once across its hosts; a
// host's rule serves its own paths only, and another path of that host
// goes to the default backend, unlimited. One rule with an alternative per
// host and its paths says both.
func TestImportedIngressNginxHostsOfDifferentPathsCountOnce(t *testing.T) {
	for name, c := range map[string]struct{ orgPath, orgOther string }{
		"a host of every path": {"/", ""},
		"hosts of other paths": {"/v2", "/v1/x"},
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("ingress-nginx", fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  annotations:
    nginx.ingress.kubernetes.io/limit-rpm: "2"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "1"
spec:
  rules:
  - host: api.example.com
    http:
      paths:
      - {path: /v1, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
  - host: api.example.org
    http:
      paths:
      - {path: %s, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`, c.orgPath), "ingress.yaml")
			if err != nil {
				t.Fatal(err)
			}
			load(t, tr, true)
			reqs := []request{
				{"GET", "api.example.com", "/v1/a", "192.0.2.1", 200},
				{"GET", "api.example.org", "/v2/b", "192.0.2.1", 200},
				{"GET", "api.example.com", "/v1/c", "192.0.2.1", 200},
				{"GET", "api.example.org", "/v2/d", "192.0.2.1", 429}, // burst+1 = 3 across the hosts
				{"GET", "api.example.com", "/v2/e", "192.0.2.1", 200}, // not api.example.com's path: the default backend's
			}
			if c.orgOther != "" {
				reqs = append(reqs, request{"GET", "api.example.org", c.orgOther, "192.0.2.1", 200})
			}
			expectRequests(t, serveImported(t, tr), reqs)
			if len(tr.SluiceRules) != 1 {
				t.Errorf("%d rules, want 1: %+v", len(tr.SluiceRules), tr.SluiceRules)
			}
			if hasDifference(tr, false, "its hosts serve different paths") {
				t.Errorf("reported that other paths of a host are limited: %+v", tr.Differences)
			}
		})
	}
}
