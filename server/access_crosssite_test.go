package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/server"
)

// loopbackChecksConfig grants loopback callers read and check, beside the
// test caller's token.
const loopbackChecksConfig = testConfig + `
admin:
  loopback_scopes: [read, check]
  callers:
    - {name: tests, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [read, check, admin]}
`

// A browser on the sluice host carries loopback's address but not its
// trust: a page of another site (cross-site, or a name rebound to 127.0.0.1)
// gets none of admin.loopback_scopes. Scripts and services calling by a
// loopback name or address, the dashboard's own same-origin requests and
// token holders keep what they have; a program calling by another name,
// the host's own, needs a token; forward-auth, whose browser headers and
// Host are the described client's, is decided as before.
func TestLoopbackScopesAreNotABrowsersFromAnotherSite(t *testing.T) {
	f := newFixture(t, loopbackChecksConfig)
	send := func(method, path, body, host string, header ...string) int {
		t.Helper()
		req, _ := http.NewRequest(method, f.admin.URL+path, strings.NewReader(body))
		if host != "" {
			req.Host = host
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := f.admin.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	check := `{"subject":"victim"}`
	for _, c := range []struct {
		name, method, path, body, host string
		header                         []string
		want                           int
	}{
		{"a script", "POST", "/v1/check", check, "", nil, 200},
		{"the dashboard's own page", "POST", "/v1/check", check, "", []string{"Sec-Fetch-Site", "same-origin", "Origin", f.admin.URL}, 200},
		{"a page of another site", "POST", "/v1/check", check, "", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, 403},
		{"a page of another port", "POST", "/v1/check", check, "", []string{"Sec-Fetch-Site", "same-site", "Origin", "http://127.0.0.1:1"}, 403},
		{"an older browser's other site", "POST", "/v1/check", check, "", []string{"Origin", "https://evil.example"}, 403},
		{"a page of another site reading", "GET", "/metrics", "", "", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "empty"}, 403},
		{"a page of another port reading", "GET", "/dashboard/data?range=1h", "", "", []string{"Sec-Fetch-Site", "same-site", "Sec-Fetch-Mode", "cors", "Origin", "http://127.0.0.1:1"}, 403},
		{"a frame of another site", "GET", "/dashboard", "", "", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "iframe"}, 403},
		{"a link from another site", "GET", "/dashboard", "", "", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}, 200},
		{"the dashboard's own read", "GET", "/dashboard/data?range=1h", "", "", []string{"Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "cors"}, 200},
		{"a name rebound to loopback", "GET", "/metrics", "", "evil.example:9090", []string{"Sec-Fetch-Site", "same-origin"}, 403},
		{"a name rebound, an older browser posting", "POST", "/v1/check", check, "evil.example", []string{"Origin", "http://evil.example"}, 403},
		{"a program by the host's name, without a token", "GET", "/metrics", "", "sluice-host:9090", nil, 401},
		{"a program by the host's name, with a token", "GET", "/metrics", "", "sluice-host:9090", []string{server.TokenHeader, testToken}, 200},
		{"localhost", "GET", "/metrics", "", "localhost:9090", nil, 200},
		{"::1", "GET", "/metrics", "", "[::1]:9090", nil, 200},
		{"a token holder from another site", "POST", "/v1/check", check, "evil.example", []string{server.TokenHeader, testToken, "Sec-Fetch-Site", "cross-site"}, 200},
		{"forward-auth of a cross-site request", "GET", "/v1/forward-auth", "", "", []string{"X-Forwarded-Method", "POST", "X-Forwarded-Uri", "/api/search",
			"Sec-Fetch-Site", "cross-site", "Origin", "https://app.example"}, 200},
	} {
		if got := send(c.method, c.path, c.body, c.host, c.header...); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// The admin listener's pages cannot be framed by another site.
func TestAdminPagesRefuseFrames(t *testing.T) {
	f := newFixture(t, testConfig)
	for _, path := range []string{"/dashboard", "/designer"} {
		r := f.do(t, "GET", path, "", nil)
		r.Body.Close()
		if r.StatusCode != 200 || !strings.Contains(r.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %q", path, r.StatusCode, r.Header)
		}
	}
}
