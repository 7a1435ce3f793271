package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/server"
)

// designerImportSources are a file of each format the designer's import
// form offers.
var designerImportSources = map[string]string{
	"nginx": `limit_req_zone $binary_remote_addr zone=perip:10m rate=10r/s;
limit_req_zone $http_x_api_key zone=bykey:10m rate=100r/m;
server {
    location /api/ { limit_req zone=perip burst=20 nodelay; }
    location /login { limit_req zone=bykey burst=5; }
}`,
	"envoy": "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: second, requests_per_unit: 10}\n  - key: header_match\n    value: login\n    rate_limit: {unit: minute, requests_per_unit: 5}\n",
	"kong": `_format_version: "3.0"
services:
  - name: api
    url: http://upstream:8080
    routes:
      - name: items
        paths: [/api]
    plugins:
      - name: rate-limiting
        config: {minute: 100, hour: 1000, policy: local}
`,
	"traefik": `http:
  middlewares:
    api-limit:
      rateLimit:
        average: 100
        period: 1m
        burst: 50
  routers:
    api:
      rule: PathPrefix(` + "`/api`" + `)
      middlewares: [api-limit]
      service: api
`,
	"haproxy": `frontend fe
  bind :80
  stick-table type ip size 100k expire 30s store http_req_rate(10s)
  http-request track-sc0 src
  http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }
  default_backend be
backend be
  server s1 127.0.0.1:8080
`,
	"ingress-nginx": `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "5"
spec:
  rules:
    - host: api.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend: {service: {name: api, port: {number: 80}}}
`,
	"envoy-gateway": `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Local
    local:
      rules:
        - limit: {requests: 10, unit: Minute}
`,
	"aws-apigateway": `{"items":[{"id":"abc","name":"basic","apiStages":[{"apiId":"a1","stage":"prod"}],"throttle":{"burstLimit":20,"rateLimit":10},"quota":{"limit":1000,"offset":0,"period":"MONTH"}}]}`,
}

// What the designer's import answers is what `sluice check` accepts: each
// file written where the configuration names it, the configuration loaded
// by package config and checked as the server builds it (server.Check),
// in shadow mode and enforcing.
func TestDesignerImportPassesSluiceCheck(t *testing.T) {
	f := newFixture(t, testConfig)
	for format, src := range designerImportSources {
		for _, enforce := range []bool{false, true} {
			body, _ := json.Marshal(map[string]any{"format": format, "source": src, "enforce": enforce})
			r := f.do(t, "POST", "/designer/import", string(body), nil)
			var got struct {
				Files  map[string]string `json:"files"`
				Detail string            `json:"detail"`
			}
			if err := json.NewDecoder(r.Body).Decode(&got); err != nil || r.StatusCode != 200 {
				t.Errorf("%s (enforce %v): %d %v %s", format, enforce, r.StatusCode, err, got.Detail)
				continue
			}
			dir := t.TempDir()
			for name, text := range got.Files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := config.Load(filepath.Join(dir, "sluice.yaml"))
			if err == nil {
				err = server.Check(cfg)
			}
			if err != nil {
				t.Errorf("%s (enforce %v): sluice check refuses what the designer imported: %v\n%s", format, enforce, err, got.Files["sluice.yaml"])
			}
		}
	}
}
