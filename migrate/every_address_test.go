package migrate_test

import "testing"

// A source that leaves every address of a family out of its limits
// (0.0.0.0/0 in an allowlist, a placeholder or a line copied from a
// firewall) limits no client of that family. sluice refuses such an
// exemption, so the import leaves it out, keeps the narrower ranges, and
// says so: the translation loads, and its limits count those clients.
func TestImportOfAnAllowlistOfEveryAddress(t *testing.T) {
	runImportCases(t, []importCase{
		{
			name:   "ingress-nginx limit-whitelist of every IPv4 and IPv6 address",
			format: "ingress-nginx",
			src: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "2"
    nginx.ingress.kubernetes.io/limit-whitelist: "0.0.0.0/0, 10.0.0.0/8, ::/0"
spec:
  ingressClassName: nginx
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`,
			limits:  []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules:   []string{"shop-api paths=[/api /api/] hosts=[shop.example.com] key=[ip/32/128] | per-second: gcra 2 per 1s burst 11"},
			exempt:  []string{"10.0.0.0/8"},
			differs: []string{"0.0.0.0/0 is every IPv4 address", "::/0 is every IPv6 address", "also count the other spellings of the paths"},
		},
		{
			name:   "nginx geo allowlist of every address",
			format: "nginx",
			src: `http {
  geo $limited { default 1; 0.0.0.0/0 0; }
  map $limited $limit_key { 0 ""; 1 $binary_remote_addr; }
  limit_req_zone $limit_key zone=api:10m rate=10r/s;
  server { location /api/ { limit_req zone=api burst=5 nodelay; } }
}`,
			limits:  []string{"api: gcra 10 per 1s burst 6"},
			costs:   map[string]int64{"/": 0, "/api/": 1},
			differs: []string{"0.0.0.0/0 is every IPv4 address"},
		},
	})
}
