package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportIngressNginxHostOfEveryPathIsReported: an Ingress serving
// every path of one host and only /v1 of another keeps one zone, so its
// rule matches every path of both hosts, and limits /other of the second
// host, which nginx sends to the default backend unlimited: reported, as
// it is for hosts of different paths.
func TestImportIngressNginxHostOfEveryPathIsReported(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "10"
spec:
  rules:
  - host: api.example.com
    http:
      paths:
      - {path: /v1, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
  - host: api.example.org
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "its hosts serve different paths") {
		t.Errorf("not reported that api.example.com's other paths are limited: %+v", tr.Differences)
	}
}
