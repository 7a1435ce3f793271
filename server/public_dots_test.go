package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// The public listener sends a path with dot segments to its clean form
// before anything judges it, as ServeMux does with literal ones, when the
// dots are percent-encoded too ("%2e%2e", "..%2F"): exemptions and costs
// match the escaped path and rules the decoded one, so unresolved encoded
// dots made /public/%2e%2e/api/search exempt under an exempt /public/
// while an upstream that resolves them (nginx, a file server) served
// /api/search.
func TestPublicListenerResolvesEncodedDotSegments(t *testing.T) {
	cfg := realtest.Replace(t, "testConfig", testConfig, `exempt: ["GET /api/health"]`, `exempt: ["GET /api/health", "GET /public/"]`)
	f := newFixture(t, cfg)
	noFollow := *f.http.Client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, c := range []struct{ target, location string }{
		{"/public/%2e%2e/api/search?q=1&next=/a/../b", "/api/search?q=1&next=/a/../b"},
		{"/public/%2E%2E/api/search", "/api/search"},
		{"/public/..%2Fapi/search", "/api/search"},
		{"/public/a/%2e%2e/%2e%2e/api/search", "/api/search"},
		{"/public/%2e/x", "/public/x"},
	} {
		req, _ := http.NewRequest("GET", f.http.URL+c.target, nil)
		req.URL.Opaque, _, _ = strings.Cut(c.target, "?") // the path sent as written
		r, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusTemporaryRedirect || r.Header.Get("Location") != c.location {
			t.Errorf("GET %s: %d Location %q, want 307 to %s", c.target, r.StatusCode, r.Header.Get("Location"), c.location)
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("upstream saw %d requests, want none", n)
	}
	// Encoded dots within a segment are no dot segment: exempt, proxied.
	r := f.do(t, "GET", "/public/%2efile", "", nil)
	if r.StatusCode != 200 || r.Header.Get("RateLimit") != "" || f.hits.Load() != 1 {
		t.Errorf("GET /public/%%2efile: %d RateLimit %q, upstream hits %d; want exempt and proxied", r.StatusCode, r.Header.Get("RateLimit"), f.hits.Load())
	}
}
