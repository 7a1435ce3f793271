package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A path with "*" (a literal character in every gateway here, a prefix
// such as /a*b/) is no pattern sluice's configuration takes ("segment is
// no wildcard"): each importer leaves it out, reported (or refuses a file
// with nothing else), and the configuration it writes loads
// (serveImported fails the test if not), without a rule of every path in
// its place unless the report says so.
func TestImportedPathsWithAnAsteriskLoad(t *testing.T) {
	for _, c := range []struct{ name, format, src string }{
		{"envoy local prefix", "envoy", strings.Replace(localChain(`            - name: api
              domains: ["*"]
              routes:
              - match: {prefix: "/a*b/"}
                route: {cluster: app}
                typed_per_filter_config:
`+localBucket("                  ", "star", 2)), "\n                token_bucket: {max_tokens: 3, tokens_per_fill: 3, fill_interval: 60s}", "", 1)},
		{"haproxy path_beg", "haproxy", "frontend fe\n  stick-table type ip size 1k store http_req_rate(10s)\n  http-request track-sc0 src\n  http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 } { path_beg /a*b/ }\n"},
		{"ingress-nginx path", "ingress-nginx", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  annotations: {nginx.ingress.kubernetes.io/limit-rps: "2"}
spec:
  ingressClassName: nginx
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /a*b, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
          - {path: /c, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`},
		{"traefik PathPrefix", "traefik", "http:\n  middlewares:\n    rl:\n      rateLimit: {average: 1, period: 1m, burst: 2}\n  routers:\n    star:\n      rule: PathPrefix(`/a*b/`)\n      middlewares: [rl]\n      service: api\n    api:\n      rule: PathPrefix(`/c/`)\n      middlewares: [rl]\n      service: api\n"},
		{"envoy gateway PathPrefix", "envoy-gateway", `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  rules:
    - matches: [{path: {type: PathPrefix, value: "/a*b"}}, {path: {type: PathPrefix, value: /c}}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Global
    global:
      rules: [{limit: {requests: 2, unit: Hour}}]
`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := migrate.Import(c.format, c.src, "src")
			if err != nil {
				t.Logf("not imported: %v", err) // refusing the file is honest too
				return
			}
			serveImported(t, tr)
			if len(differsLines(tr, "every request")) > 0 {
				return // an expression the importer cannot read, said so
			}
			for _, r := range tr.SluiceRules {
				for _, m := range r.Any {
					if len(m.Paths) == 0 {
						t.Errorf("rule %s: an alternative of every path, where the source limits /c only", r.Name)
					}
				}
				if len(r.Any) == 0 && len(r.Paths) == 0 {
					t.Errorf("rule %s matches every path, where the source limits /c only", r.Name)
				}
			}
			if len(tr.SluiceRules) == 0 {
				t.Errorf("no rule: /c is not limited")
			}
		})
	}
}
