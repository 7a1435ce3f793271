package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A degradation class matches a request as exemptions and costs do: its
// host in any case and without the root dot, and an endpoint to shed under
// either reading of an escaped path ("/api%2Fgenerate" is /api/generate to
// an upstream that decodes before it routes), so no spelling of a request
// escapes the shedding of its endpoint.
func TestDegradationClassesMatchEverySpelling(t *testing.T) {
	cfg := strings.Replace(degradeConfig, `expensive: ["POST /api/generate"]`,
		`expensive: ["POST /api/generate", "POST api.example.com/v2/generate"]`, 1)
	_, l := startDegradingWith(t, cfg)
	base, admin := "http://"+l.public, "http://"+l.admin
	pinLevel(t, admin, "elevated")
	for _, c := range []struct{ host, path string }{
		{"", "/api/generate"},
		{"", "/api%2Fgenerate"},
		{"api.example.com", "/v2/generate"},
		{"API.Example.com", "/v2/generate"},
		{"api.example.com.", "/v2/generate"},
	} {
		req, _ := http.NewRequest("POST", base+c.path, nil)
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("level 1, POST %s%s (an expensive endpoint): %d, want 503", c.host, c.path, resp.StatusCode)
		}
	}
}
