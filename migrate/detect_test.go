package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestDetect reads the format of each kind of file the import tests use,
// and refuses to guess for a file with no sign of any, or of two.
func TestDetect(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\nserver { limit_req zone=one; }", "nginx"},
		{"http {\n    limit_conn_zone $binary_remote_addr zone=c:1m;\n}", "nginx"},
		{"domain: api\ndescriptors:\n  - key: k\n", "envoy"},
		{envoyLocalBootstrap, "envoy"},
		{"_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config: {minute: 5}\n", "kong"},
		{"plugins: [{name: rate-limiting}]\nroutes:\n- name: r\n  plugins:\n  - name: 'rate-limiting'\n", "kong"},
		{"http:\n  middlewares:\n    a:\n      rateLimit: {average: 1}\n", "traefik"},
		{haproxySite, "haproxy"},
		{ingressFile, "ingress-nginx"},
		{"global\n  maxconn 10\n", ""},
		{"limit_req_zone x zone=a:1m rate=1r/s;\nfrontend fe\n", ""},
		// A site's listen directives are nginx's, not HAProxy's sections.
		{"limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\nserver {\n    listen 80;\n    listen [::]:80;\n    limit_req zone=one;\n}\n", "nginx"},
		{"limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\nserver {\n    listen 8080 ;\n    limit_req zone=one;\n}\n", "nginx"},
		{"frontend fe\n  bind :80\nbackend be_api.v1\n  server s1 10.0.0.1:80\nlisten stats\n  bind :8404\n", "haproxy"},
		// A section line may end in a comment, and listen may name its address.
		{"frontend fe_https # TLS termination\n  bind :443\n", "haproxy"},
		{"listen stats 0.0.0.0:8404\n  stats enable\n", "haproxy"},
		// envoyproxy/ratelimit's ConfigMap in a List beside its Deployment,
		// as kubectl get -o yaml writes them: every resource indented.
		{"apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: rl}\n    data:\n      config.yaml: |\n        domain: rl\n        descriptors:\n          - key: remote_address\n  - apiVersion: apps/v1\n    kind: Deployment\n", "envoy"},
		{"limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\nserver {\n    listen 80; # plain\n    listen 443 ssl http2;\n    limit_req zone=one;\n}\n", "nginx"},
	} {
		got, ok := migrate.Detect(c.src)
		if c.want == "" {
			if ok {
				t.Errorf("%.40q: guessed %s, want no guess", c.src, got)
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("%.40q: %q (%v), want %s", c.src, got, ok, c.want)
		}
	}
}
