package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// ingressFile is two Ingresses of one host, ingress-nginx's way: /api with
// limit-rps 2 (burst ×2) and an allowlist, and /api/admin, below it, with
// limit-rpm 1 — nginx sends /api/admin/… to the second's location only.
const ingressFile = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "2"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "2"
    nginx.ingress.kubernetes.io/limit-whitelist: "10.0.0.0/8, 192.0.2.9"
spec:
  ingressClassName: nginx
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: admin
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/limit-rpm: "1"
    nginx.ingress.kubernetes.io/limit-whitelist: "10.0.0.0/8,192.0.2.9"
spec:
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /api/admin, pathType: Prefix, backend: {service: {name: admin, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata: {name: api}
`

func TestImportIngressNginx(t *testing.T) {
	runImportCases(t, []importCase{
		{
			name:   "two Ingresses of one host, one below the other, with an allowlist",
			format: "ingress-nginx",
			src:    ingressFile,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"shop-api paths=[/api /api/] hosts=[shop.example.com] except=[/api/admin /api/admin/] key=[ip/32/128] | per-second: gcra 2 per 1s burst 5",
				"shop-admin paths=[/api/admin /api/admin/] hosts=[shop.example.com] key=[ip/32/128] | per-minute: gcra 1 per 1m0s burst 6",
			},
			exempt:  []string{"10.0.0.0/8", "192.0.2.9/32"},
			same:    []string{"limit_req burst=4 nodelay: a bucket of burst+1 = 5", "one count per client address, shared by every host and path", "are left out of every rate limit"},
			differs: []string{"status: ingress-nginx refuses with limit-req-status-code", "replicas", "client address"},
		},
		{
			name:   "connections, exact and every-path Ingresses, what is not imported",
			format: "ingress-nginx",
			src: `kind: Ingress
metadata:
  name: uploads
  annotations:
    nginx.ingress.kubernetes.io/limit-connections: "3"
    nginx.ingress.kubernetes.io/limit-rpm: "60"
    nginx.ingress.kubernetes.io/limit-rate: "100"
spec:
  rules:
    - http:
        paths:
          - {path: /upload/, pathType: Exact}
---
kind: Ingress
metadata:
  name: site
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "50"
spec:
  rules:
    - host: www.example.com
---
kind: Ingress
metadata:
  name: regex
  annotations:
    nginx.ingress.kubernetes.io/use-regex: "true"
    nginx.ingress.kubernetes.io/limit-rps: "1"
spec:
  rules:
    - http: {paths: [{path: "/v[0-9]+/", pathType: ImplementationSpecific}]}
---
kind: Ingress
metadata:
  name: off
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "0"
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				// Ingress regex's use-regex makes every location of the default server ~* "^<path>": a prefix.
				"uploads paths=[/upload/] key=[ip/32/128] | per-minute: gcra 60 per 1m0s burst 301 | concurrent: concurrency 3 per 10m0s",
				"site paths=[] hosts=[www.example.com] key=[ip/32/128] | per-second: gcra 50 per 1s burst 251",
			},
			differs: []string{"limit-connections", "limit-rate: a bandwidth limit", "Ingress regex: not imported: use-regex", "Ingress uploads: without a host it is nginx's default server"},
		},
	})
}

// TestImportedIngressNginxDecides serves the import of ingressFile: /api's
// bucket of 5 per address, /api/admin's own of 6 (the /api rule leaves it
// out), the allowlisted address never refused, another host not limited.
func TestImportedIngressNginxDecides(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", ingressFile, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const shop = "http://shop.example.com"
	var want []sent
	for i := range 7 {
		s := sent{shop + "/api/items", "", "198.51.100.1", 200}
		if i >= 5 {
			s.want = 429
		}
		want = append(want, s)
	}
	for range 6 {
		want = append(want, sent{shop + "/api/admin/x", "", "198.51.100.1", 200})
	}
	want = append(want, sent{shop + "/api/admin/x", "", "198.51.100.1", 429}, sent{shop + "/api/items", "", "198.51.100.2", 200})
	for range 8 {
		want = append(want, sent{shop + "/api/items", "", "192.0.2.9", 200})
	}
	want = append(want, sent{"http://other.example.com/api/items", "", "198.51.100.1", 200}) // another host: no rule
	expectStatuses(t, serveImported(t, tr), want)
}

// TestImportIngressNginxImplementationSpecificIsAStringPrefix: ingress-nginx
// writes an ImplementationSpecific path as an nginx prefix location, which
// also takes /apix; the rule's /api and /api/ do not, so the import reports
// it as a difference, and a Prefix path, matched element by element, as the
// same.
func TestImportIngressNginxImplementationSpecificIsAStringPrefix(t *testing.T) {
	tr, err := migrate.Import("ingress-nginx", `kind: Ingress
metadata:
  name: a
  annotations: {nginx.ingress.kubernetes.io/limit-rps: "2"}
spec:
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /api, pathType: ImplementationSpecific}
          - {path: /v2, pathType: Prefix}
`, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reported(tr, "/apix") {
		t.Errorf("no difference says that the ImplementationSpecific /api also matches /apix: %+v", tr.Differences)
	}
	if reported(tr, "/v2x") || !hasDifference(tr, true, "path /v2") {
		t.Errorf("the Prefix path /v2 is not reported as matched alike: %+v", tr.Differences)
	}
}

// An annotation ingress-nginx cannot read as an integer does not refuse the
// file: a limit-rps or limit-rpm of "abc" (which the controller refuses or,
// before 1.9, reads as no limit) or of -5 (no limit) is left out, a
// limit-burst-multiplier of "x" is the default 5, each reported naming its
// Ingress. A multiplier below 1 that makes a burst of 0 or less, which nginx
// refuses, refuses the file naming the Ingress; beside limit-connections
// alone, which writes no burst, it is read as the controller reads it.
func TestImportIngressNginxAnnotationsTheControllerIgnores(t *testing.T) {
	runImportCases(t, []importCase{{
		name:   "unreadable limits left out, an unreadable multiplier the default",
		format: "ingress-nginx",
		src: `kind: Ingress
metadata:
  name: api
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: abc
    nginx.ingress.kubernetes.io/limit-rpm: "10"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: x
spec:
  rules: [{host: shop.example.com}]
---
kind: Ingress
metadata:
  name: web
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "-5"
    nginx.ingress.kubernetes.io/limit-connections: "2"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "-1"
spec:
  rules: [{host: www.example.com}]
`,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules: []string{
			"shop-api paths=[] hosts=[shop.example.com] key=[ip/32/128] | per-minute: gcra 10 per 1m0s burst 51",
			"web paths=[] hosts=[www.example.com] key=[ip/32/128] | concurrent: concurrency 2 per 10m0s",
		},
		differs: []string{
			`Ingress shop/api limit-rps: "abc" is not an integer`,
			`Ingress shop/api limit-burst-multiplier: "x" is not an integer: ingress-nginx ignores it and multiplies by its default, 5`,
			"Ingress web limit-rps: -5: ingress-nginx writes no limit",
		},
	}})
	for _, mult := range []string{"-1", "0"} {
		src := "kind: Ingress\nmetadata:\n  name: api\n  annotations: {nginx.ingress.kubernetes.io/limit-rps: \"2\", nginx.ingress.kubernetes.io/limit-burst-multiplier: \"" + mult + "\"}\n"
		_, err := migrate.Import("ingress-nginx", src, "ingress.yaml")
		if err == nil || !strings.Contains(err.Error(), "Ingress api") || !strings.Contains(err.Error(), "nginx refuses") {
			t.Errorf("multiplier %s: %v", mult, err)
		}
	}
}
