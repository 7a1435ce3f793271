package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedIngressNginxWildcardHostIsItsNames: an Ingress of host
// *.example.com is nginx's server *.example.com, which serves every name
// under example.com that no other server names, and not example.com
// itself; a request to another host (other.org, another Ingress's) goes to
// that host's server, where the Ingress's zone does not count it. The
// rule's host is the wildcard, not every host, and the Ingress is no
// default server.
func TestImportedIngressNginxWildcardHostIsItsNames(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: wild
  annotations:
    nginx.ingress.kubernetes.io/limit-rpm: "2"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "1"
spec:
  rules:
  - host: "*.example.com"
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: other}
spec:
  rules:
  - host: other.org
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "other.org", "/a", "192.0.2.1", 200}, // other.org's server: not counted
		{"GET", "other.org", "/b", "192.0.2.1", 200},
		{"GET", "other.org", "/c", "192.0.2.1", 200},
		{"GET", "example.com", "/d", "192.0.2.1", 200}, // not a name under example.com
		{"GET", "example.com", "/d", "192.0.2.1", 200},
		{"GET", "example.com", "/d", "192.0.2.1", 200},
		{"GET", "x.example.com", "/e", "192.0.2.1", 200},
		{"GET", "y.example.com", "/f", "192.0.2.1", 200},
		{"GET", "a.b.example.com", "/g", "192.0.2.1", 200},
		{"GET", "x.example.com", "/h", "192.0.2.1", 429}, // burst+1 = 3 across the names
	})
	if reported(tr, "default server") {
		t.Errorf("reported the Ingress of a wildcard host as the default server: %+v", tr.Differences)
	}
	if reported(tr, "not a host name sluice's rules match") {
		t.Errorf("reported the wildcard as a host the rules cannot match: %+v", tr.Differences)
	}
}

// TestImportIngressNginxWildcardHostUnderNamedHostIsReported: a name
// under an Ingress's wildcard that another Ingress names is served by
// that name's own server, which nginx prefers; the wildcard rule matches
// it too, and the report says so.
func TestImportIngressNginxWildcardHostUnderNamedHostIsReported(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: wild
  annotations: {nginx.ingress.kubernetes.io/limit-rps: "5"}
spec:
  rules:
  - host: "*.example.com"
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: named}
spec:
  rules:
  - host: x.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	if !reported(tr, "names the host x.example.com") {
		t.Errorf("not reported that x.example.com's own server takes its requests: %+v", tr.Differences)
	}
	if !hasDifference(tr, true, "serves the names under example.com") {
		t.Errorf("the report does not say what the wildcard matches: %+v", tr.Differences)
	}
}
