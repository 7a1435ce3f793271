package server_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// ingressNginxSite is the server that ingress-nginx's nginx.tmpl writes for
// an Ingress with the auth-url annotation (and auth-proxy-set-headers
// naming a ConfigMap with Sluice-Token), cut to what forward-auth sees:
// the auth location's headers as the template sets them, the client's
// passed on, and auth_request's answer (2xx admits; 401 and 403 are the
// client's; anything else a 500).
const ingressNginxSite = `
server {
    listen LISTEN;
    location / {
        auth_request /_external-auth;
        proxy_pass http://UPSTREAM;
    }
    location = /_external-auth {
        internal;
        proxy_pass_request_body     off;
        proxy_set_header            Content-Length          "";
        proxy_set_header            Host                    sluice.sluice.svc.cluster.local;
        proxy_set_header            X-Original-URL          $scheme://$http_host$request_uri;
        proxy_set_header            X-Original-Method       $request_method;
        proxy_set_header            X-Sent-From             "nginx-ingress-controller";
        proxy_set_header            X-Real-IP               $remote_addr;
        proxy_set_header            X-Forwarded-For         $remote_addr;
        proxy_set_header            X-Auth-Request-Redirect $request_uri;
        proxy_pass_request_headers  on;
        proxy_set_header            'Sluice-Token'          'TOKEN';
        proxy_pass http://ADMIN/v1/forward-auth;
    }
}
`

// Through a real nginx set up as ingress-nginx sets up an auth-url, with
// response.deny_status: 403: sluice judges each request by the request
// line nginx read (X-Original-URL), whatever the client adds. A POST
// /api/generate costs 2 of the 3 a minute, and the next is refused with a
// 403 (which auth_request passes to the client; a 429 would be a 500); a
// client's own X-Forwarded-Uri naming the exempt /api/health, or
// X-Forwarded-Host naming another host, is a 500 and reaches nothing; so is
// a Host that names no host; a request without Host is judged by its path.
func TestIngressNginxAuthURLIsJudgedByItsRequestLine(t *testing.T) {
	f := newFixture(t, realtest.Replace(t, "testConfig", testConfig, "response:\n", "response:\n  deny_status: 403\n"))
	sluice := serveOn(t, f.srv)
	addr := realtest.FreeAddr(t)
	realtest.Nginx(t, addr, realtest.Replace(t, "ingressNginxSite", ingressNginxSite,
		"LISTEN", addr, "UPSTREAM", strings.TrimPrefix(f.srv.Config().Upstream, "http://"),
		"ADMIN", sluice.admin, "TOKEN", testToken))
	ask := func(raw string) int {
		t.Helper()
		return rawStatus(t, addr, raw+"Connection: close\r\n\r\n")
	}
	for _, c := range []struct {
		name, raw string
		status    int
		hits      int64
	}{
		{"a client's own X-Forwarded-Uri naming an exempt path", "GET /api/search HTTP/1.1\r\nHost: api.example.com\r\nX-Forwarded-Uri: /api/health\r\n", 500, 0},
		{"a client's own X-Forwarded-Host naming another host", "GET /api/search HTTP/1.1\r\nHost: api.example.com\r\nX-Forwarded-Host: www.example.com\r\n", 500, 0},
		{"a Host with a query in it", "GET /api/health HTTP/1.1\r\nHost: api.example.com?x=\r\n", 500, 0},
		{"the exempt path", "GET /api/health HTTP/1.1\r\nHost: api.example.com\r\n", 200, 1},
		{"POST /api/generate, cost 2 of 3", "POST /api/generate HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 0\r\n", 200, 2},
		{"POST /api/generate again, over the quota", "POST /api/generate HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 0\r\n", 403, 2},
		{"an absolute-form target, judged by its path", "GET http://api.example.com/api/health HTTP/1.1\r\nHost: api.example.com\r\n", 200, 3},
		{"HTTP/1.0 without Host, judged by its path", "GET /api/health HTTP/1.0\r\n", 200, 4},
		{"the last unit", "GET /api/search HTTP/1.1\r\nHost: api.example.com\r\n", 200, 5},
		{"the quota spent", "GET /api/search HTTP/1.1\r\nHost: api.example.com\r\n", 403, 5},
	} {
		if got := ask(c.raw); got != c.status || f.hits.Load() != c.hits {
			t.Errorf("%s: %d, upstream saw %d; want %d, %d", c.name, got, f.hits.Load(), c.status, c.hits)
		}
	}
}
