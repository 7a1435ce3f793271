package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// ingressNginxAuthHeaders returns the data of the auth-proxy-set-headers
// ConfigMap that docs/forward-auth.md gives for ingress-nginx, its token
// replaced by testToken, as ingress-nginx's buildAuthProxySetHeaders writes
// it into the auth location: proxy_set_header 'name' 'value'; sorted.
func ingressNginxAuthHeaders(t *testing.T) string {
	t.Helper()
	doc := readRepoFile(t, "../docs/forward-auth.md")
	_, block, ok := strings.Cut(doc, "```yaml\napiVersion: v1\nkind: ConfigMap\n")
	block, _, ok2 := strings.Cut(block, "\n---\n")
	if !ok || !ok2 {
		t.Fatal("docs/forward-auth.md: no ConfigMap for auth-proxy-set-headers (a yaml block of a ConfigMap, then ---)")
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal([]byte(block), &cm); err != nil {
		t.Fatalf("docs/forward-auth.md: the auth-proxy-set-headers ConfigMap: %v", err)
	}
	if _, ok := cm.Data["Sluice-Token"]; !ok {
		t.Fatal("docs/forward-auth.md: the auth-proxy-set-headers ConfigMap sets no Sluice-Token")
	}
	cm.Data["Sluice-Token"] = testToken
	var lines []string
	for name, value := range cm.Data {
		lines = append(lines, fmt.Sprintf("        proxy_set_header '%s' '%s';\n", name, value))
	}
	slices.Sort(lines)
	return strings.Join(lines, "")
}

// ingressNginxServer is ingressNginxSite's server for an Ingress of the
// host name ("_" for ingress-nginx's default server, which serves the
// Ingresses without a host), its auth location setting the documented
// auth-proxy-set-headers ConfigMap's headers.
func ingressNginxServer(t *testing.T, name, addr, upstream string, sluice listening) string {
	t.Helper()
	return realtest.Replace(t, "ingressNginxSite", ingressNginxSite,
		"    listen LISTEN;\n", "    listen "+addr+";\n    server_name "+name+";\n",
		"        proxy_set_header            'Sluice-Token'          'TOKEN';\n", ingressNginxAuthHeaders(t),
		"UPSTREAM", upstream, "ADMIN", sluice.admin)
}

// Through a real nginx set up as ingress-nginx sets up an auth-url, with
// docs/forward-auth.md's auth-proxy-set-headers ConfigMap: sluice judges
// the host nginx routes a request by ($host), not the one its Host header
// names (X-Original-URL's $http_host). An absolute-form target names the
// host nginx routes by, so "GET http://www.example.com/…" with "Host:
// api.example.com", or without Host, is served by www.example.com's
// Ingress: it is refused (sluice's 400, a 500 at the client) and reaches
// nothing, rather than judged outside www.example.com's host rule. The
// same host in another case or with a port is www.example.com's, and a
// client's own X-Forwarded-Host changes nothing; a request without Host,
// served by the default server, is one to no host.
func TestIngressNginxJudgesTheHostNginxRoutesBy(t *testing.T) {
	cfg := realtest.Replace(t, "testConfig", testConfig,
		"response:\n", "response:\n  deny_status: 403\n",
		"{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}", "{name: per-minute, algorithm: fixed-window, quantity: 30, window: 1m}")
	f := newFixture(t, cfg+hostRule("www.example.com"))
	sluice := serveOn(t, f.srv)
	addr := realtest.FreeAddr(t)
	upstream := strings.TrimPrefix(f.srv.Config().Upstream, "http://")
	realtest.Nginx(t, addr, ingressNginxServer(t, "_", addr, upstream, sluice)+ingressNginxServer(t, "www.example.com", addr, upstream, sluice))
	for _, c := range []struct {
		name, raw string
		status    int
		hits      int64
	}{
		{"www.example.com's first request", "GET /api/search HTTP/1.1\r\nHost: www.example.com\r\n", 200, 1},
		{"its second, in another case and with a port", "GET /api/search HTTP/1.1\r\nHost: WWW.Example.COM:" + addr[strings.LastIndexByte(addr, ':')+1:] + "\r\n", 403, 1},
		{"its third, with the client's own X-Forwarded-Host", "GET /api/search HTTP/1.1\r\nHost: www.example.com\r\nX-Forwarded-Host: api.example.com\r\n", 403, 1},
		{"www.example.com's target with api.example.com's Host", "GET http://www.example.com/api/search HTTP/1.1\r\nHost: api.example.com\r\n", 500, 1},
		{"www.example.com's target without Host", "GET http://www.example.com/api/search HTTP/1.0\r\n", 500, 1},
		{"a request without Host, to the default server", "GET /api/search HTTP/1.0\r\n", 200, 2},
		{"api.example.com, which the default server serves", "GET /api/search HTTP/1.1\r\nHost: api.example.com\r\n", 200, 3},
	} {
		if got := rawStatus(t, addr, c.raw+"Connection: close\r\n\r\n"); got != c.status || f.hits.Load() != c.hits {
			t.Errorf("%s: %d, upstream saw %d; want %d, %d", c.name, got, f.hits.Load(), c.status, c.hits)
		}
	}
}

// X-Original-URL's host is the client's Host header, X-Forwarded-Host
// (ingress-nginx's $host, as docs/forward-auth.md sets it up) the host
// nginx routes by: the two must name one host, in any case and a port or
// a final dot aside, and the request is judged as X-Forwarded-Host's.
// Hosts that differ are a 400 that spends nothing. Beside an X-Original-URL
// without a host, X-Forwarded-Host must be absent or "_" (the $host of a
// request without Host on ingress-nginx's default server), the request
// then being one to no host.
func TestForwardAuthIngressNginxHostIsTheOneNginxRoutesBy(t *testing.T) {
	f := newFixture(t, hostConfig("www.example.com"))
	ask := func(host, forwardedHost string) (int, string) {
		t.Helper()
		status, _, body := askIngressNginx(t, f, ingressNginxAuth("GET", host, "/api/search", "198.51.100.68", map[string]string{"X-Forwarded-Host": forwardedHost}))
		return status, body
	}
	for _, c := range []struct{ host, forwardedHost string }{
		{"api.example.com", "www.example.com"},
		{"", "www.example.com"},
		{"api.example.com", "_"},
		{"www.example.com.evil", "www.example.com"},
	} {
		if status, body := ask(c.host, c.forwardedHost); status != 400 || !strings.Contains(body, "different hosts") {
			t.Errorf("X-Original-URL's host %q, X-Forwarded-Host %q: %d %s, want a 400 problem", c.host, c.forwardedHost, status, body)
		}
	}
	if status, body := ask("WWW.Example.COM.:8443", "www.example.com"); status != 200 {
		t.Errorf("X-Original-URL's host WWW.Example.COM.:8443, X-Forwarded-Host www.example.com: %d %s, want 200 (the 400s spent nothing)", status, body)
	}
	if status, body := ask("www.example.com", "www.example.com"); status != 429 {
		t.Errorf("www.example.com's second request: %d %s, want 429 by the host's rule", status, body)
	}
	if status, body := ask("", "_"); status != 200 {
		t.Errorf("a request without Host, X-Forwarded-Host _: %d %s, want 200 (no host, which the rule does not match)", status, body)
	}
}
