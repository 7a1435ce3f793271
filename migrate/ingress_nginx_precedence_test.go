package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedIngressNginxIngressOfSkippedPathsLimitsNothing: an Ingress
// whose every path is one a rule cannot match (/static/*) is not imported
// and reported so; no rule is written of it, as a rule of no place would
// limit every request on every host (here api.example.com/api, another
// Ingress's, and www.example.com, no Ingress's).
func TestImportedIngressNginxIngressOfSkippedPathsLimitsNothing(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: static
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "1"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "1"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /static/*
        pathType: ImplementationSpecific
        backend: {service: {name: s, port: {number: 80}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "100"
spec:
  rules:
  - host: api.example.com
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
		{"GET", "api.example.com", "/api", "192.0.2.1", 200},
		{"GET", "api.example.com", "/api", "192.0.2.1", 200},
		{"GET", "api.example.com", "/api", "192.0.2.1", 200}, // api's bucket holds 501; static's Ingress does not serve this host
		{"GET", "www.example.com", "/", "192.0.2.2", 200},
		{"GET", "www.example.com", "/", "192.0.2.2", 200},
		{"GET", "www.example.com", "/", "192.0.2.2", 200}, // no Ingress limits this host
	})
	if !hasDifference(tr, false, "Ingress static: not imported: none of its paths is left to it") {
		t.Errorf("the report does not say Ingress static is not imported: %+v", tr.Differences)
	}
}

// TestImportedIngressNginxRegexOfAHostMakesItsPathsPrefixes: ingress-nginx
// writes every location of a host as a case-insensitive regular expression,
// `~* "^<path>"`, once any Ingress of that host sets use-regex or
// rewrite-target (enforceRegexModifier; its docs' "Path Priority"):
// Ingress login's Exact /login is then a prefix, which also takes
// /login/reset (and /loginx). The import matches /login and the paths
// below /login/, and reports the regular expression.
func TestImportedIngressNginxRegexOfAHostMakesItsPathsPrefixes(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: login
  annotations:
    nginx.ingress.kubernetes.io/limit-rpm: "1"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "1"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /login
        pathType: Exact
        backend: {service: {name: auth, port: {number: 80}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: assets
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /$2
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /assets(/|$)(.*)
        pathType: ImplementationSpecific
        backend: {service: {name: cdn, port: {number: 80}}}
`, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	expectRequests(t, h, []request{
		{"GET", "shop.example.com", "/login/reset", "192.0.2.1", 200},
		{"GET", "shop.example.com", "/login/reset", "192.0.2.1", 200},
		{"GET", "shop.example.com", "/login/reset", "192.0.2.1", 429}, // nginx: location ~* "^/login", burst 1: a bucket of 2
	})
	if !hasDifference(tr, false, "Ingress login path /login: Ingress assets sets use-regex or rewrite-target on shop.example.com") {
		t.Errorf("the report does not say Ingress assets makes /login a regular expression: %+v", tr.Differences)
	}
}

// TestImportedIngressNginxOldestIngressOfAPathWins: "If the same path for
// the same host is defined in more than one Ingress, the oldest rule wins"
// (ingress-nginx, How it works): shop.example.com/api is Ingress api's
// (created first, 100 r/s), and api-v2's limit never applies there. The
// import keeps the path in the oldest Ingress's rule alone, by
// metadata.creationTimestamp; without the timestamps it reports both.
func TestImportedIngressNginxOldestIngressOfAPathWins(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api-v2
  creationTimestamp: "2025-03-01T00:00:00Z"
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "1"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "1"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /api
        pathType: Prefix
        backend: {service: {name: s2, port: {number: 80}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  creationTimestamp: "2024-01-01T00:00:00Z"
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "100"
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
		{"GET", "shop.example.com", "/api/x", "192.0.2.1", 200},
		{"GET", "shop.example.com", "/api/x", "192.0.2.1", 200},
		{"GET", "shop.example.com", "/api/x", "192.0.2.1", 200}, // ingress-nginx: Ingress api's location, a bucket of 501
	})
	if !hasDifference(tr, true, "Ingress api-v2 path /api: Ingress api, created earlier") {
		t.Errorf("the report does not say Ingress api-v2 leaves /api to Ingress api: %+v", tr.Differences)
	}
}

// TestImportIngressNginxSamePathWithoutTimestampsIsReported: without
// metadata.creationTimestamp the file does not say which of two Ingresses
// of the same host and path ingress-nginx serves it from: both rules count
// it, reported.
func TestImportIngressNginxSamePathWithoutTimestampsIsReported(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api-v2
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "1"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: s2, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "100"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: s, port: {number: 80}}}}
`, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "Ingress api-v2: Ingress api serves shop.example.com/api too") {
		t.Errorf("the report does not say two Ingresses serve shop.example.com/api: %+v", tr.Differences)
	}
}

// TestImportedIngressNginxCanaryLimitsAreIgnored: ingress-nginx ignores a
// canary Ingress's annotations other than the canary ones (and
// load-balance, upstream-hash-by, affinity): its host and path keep the
// main Ingress's limits, here none. The import writes no rule of the
// canary's limit-rps, and reports it.
func TestImportedIngressNginxCanaryLimitsAreIgnored(t *testing.T) {
	_, err := migrate.Import("ingress-nginx", canaryFile, "ingress.yaml")
	if err == nil || !strings.Contains(err.Error(), "a canary Ingress") {
		t.Fatalf("the canary's limits are the file's only ones: want an error naming the canary, got %v", err)
	}
	tr, err := migrate.Import("ingress-nginx", canaryFile+`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: www
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "1"
spec:
  rules:
  - host: www.example.com
`, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "shop.example.com", "/api/x", "192.0.2.1", 200},
		{"GET", "shop.example.com", "/api/x", "192.0.2.1", 200},
		{"GET", "shop.example.com", "/api/x", "192.0.2.1", 200}, // ingress-nginx: the canary's limit-rps is ignored
	})
	if !hasDifference(tr, false, "Ingress api-canary: a canary Ingress") {
		t.Errorf("the report does not say the canary's limits are ignored: %+v", tr.Differences)
	}
}

// canaryFile is an Ingress of shop.example.com/api without limits, and its
// canary, whose limit-rps ingress-nginx ignores.
const canaryFile = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /api
        pathType: Prefix
        backend: {service: {name: api, port: {number: 80}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api-canary
  annotations:
    nginx.ingress.kubernetes.io/canary: "true"
    nginx.ingress.kubernetes.io/canary-weight: "10"
    nginx.ingress.kubernetes.io/limit-rps: "1"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "1"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /api
        pathType: Prefix
        backend: {service: {name: api-v2, port: {number: 80}}}
`
