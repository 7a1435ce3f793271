package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// sendHost sends method path to f's public listener with the Host header
// host.
func sendHost(t *testing.T, f *fixture, method, path, host string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, f.http.URL+path, nil)
	req.Host = host
	resp, err := f.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// An exception named with its host inside an expensive subtree (critical
// "POST api.example.com/api/pay" or health "GET api.example.com/api/health"
// beside expensive "/api/") is not shed as expensive: of the exception and
// the expensive pattern a request matches, the more specific decides, as in
// a ServeMux (shed and outranks), and a host with a pattern's host decides
// before one without. A host matches in any case and without the root dot
// or dots, before a port or without one, and ServeMux drops the port
// (docs/rules.md, Routes): outranks reads a request's host so too, so
// api.example.com.:8443 and API.example.com.. are the exception's host.
// No request changes how a later one is judged: after those, a request to
// api.example.com is served as well, and one to another host, which the
// exception does not name, is shed as expensive.
func TestAnExceptionWithAHostInsideAnExpensiveSubtreeIsNotShedWhateverItsHostSpelling(t *testing.T) {
	cfg := strings.Replace(shedConfig, `expensive: ["POST /api/generate"]`, `expensive: ["/api/"]`, 1)
	cfg = strings.Replace(cfg, `critical: ["POST /api/pay"]`, `critical: ["POST api.example.com/api/pay"]`, 1)
	f := newFixture(t, strings.Replace(cfg, `health: ["GET /health"]`, `health: ["GET api.example.com/api/health"]`, 1))
	for _, c := range []struct {
		level, method, path, host string
		shed                      bool
	}{
		{"elevated", "POST", "/api/pay", "api.example.com.:8443", false},
		{"elevated", "POST", "/api/pay", "API.example.com..", false},
		{"elevated", "POST", "/api/pay", "api.example.com..:8443", false},
		{"elevated", "POST", "/api/pay", "api.example.com", false},
		{"elevated", "POST", "/api/pay", "other.example.com", true},
		{"critical", "GET", "/api/health", "api.example.com.:8443", false},
		{"critical", "GET", "/api/health", "API.example.com..", false},
		{"critical", "GET", "/api/health", "api.example.com", false},
		{"elevated", "GET", "/api/health", "other.example.com", true},
	} {
		f.pin(t, c.level)
		r := sendHost(t, f, c.method, c.path, c.host)
		if want := map[bool]int{true: 503, false: 200}[c.shed]; r.StatusCode != want {
			t.Errorf("%s, %s %s to %s: %d %s, want %d", c.level, c.method, c.path, c.host, r.StatusCode, readAll(t, r), want)
		}
	}
}
