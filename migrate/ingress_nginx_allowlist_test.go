package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedIngressNginxLimitAllowlist: ingress-nginx names its
// allowlist limit-allowlist (limit-whitelist is its older name): the
// listed addresses, which ingress-nginx never limits, are exempt.
func TestImportedIngressNginxLimitAllowlist(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "1"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "1"
    nginx.ingress.kubernetes.io/limit-allowlist: "10.0.0.0/8"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /api
        pathType: Prefix
        backend: {service: {name: s, port: {number: 80}}}
`, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "shop.example.com", "/api/x", "10.1.2.3", 200},
		{"GET", "shop.example.com", "/api/x", "10.1.2.3", 200},
		{"GET", "shop.example.com", "/api/x", "10.1.2.3", 200}, // ingress-nginx: 10.0.0.0/8 is not limited
	})
}
