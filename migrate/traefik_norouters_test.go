package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikOneMiddlewareWithoutRoutersIsReported: Traefik applies
// a middleware to the routers naming it only, so even one middleware in a
// file without routers (a Middleware beside Ingresses that name it in
// traefik.ingress.kubernetes.io/router.middlewares, which the import does
// not read) becomes a limit on every request: reported, as for several.
func TestImportTraefikOneMiddlewareWithoutRoutersIsReported(t *testing.T) {
	tr, err := migrate.Import("traefik", `apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: api-ratelimit, namespace: default}
spec:
  rateLimit: {average: 50, burst: 100}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  namespace: default
  annotations:
    traefik.ingress.kubernetes.io/router.middlewares: default-api-ratelimit@kubernetescrd
spec:
  rules:
  - host: api.example.com
    http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`, "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "every imported limit to every request") {
		t.Errorf("not reported that the middleware now limits every request: %+v", tr.Differences)
	}
	if !hasDifference(tr, false, "router.middlewares") {
		t.Errorf("not reported that the Ingress annotation is not read: %+v", tr.Differences)
	}
}
