package httplimit_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// TestEndpointHostsMatchInAnyCase: a cost or an exemption of a host
// ("POST api.example.com/v1/reports") applies to the host however the
// client writes it, as a rule's hosts do: in any case, with or without the
// root dot, with or without a port. Go's ServeMux compares a pattern's
// host with the request's byte for byte, so without this a client that
// wrote API.example.com would spend 1 instead of the endpoint's 5.
func TestEndpointHostsMatchInAnyCase(t *testing.T) {
	h, _ := setup(t, `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
    costs: {"POST api.example.com/v1/reports": 5, "POST Eu.Example.com/v1/reports": 7}
default_plan: free
exempt: ["GET api.example.com/healthz", "GET Status.Example.com/"]
`, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	remaining := 100
	for _, c := range []struct {
		method, host, path string
		cost               int // 0: exempt, no RateLimit header
	}{
		{"POST", "api.example.com", "/v1/reports", 5},
		{"POST", "API.Example.com", "/v1/reports", 5},
		{"POST", "api.example.com.", "/v1/reports", 5},
		{"POST", "API.EXAMPLE.COM.:8443", "/v1/reports", 5},
		{"POST", "eu.example.com", "/v1/reports", 7},
		{"POST", "EU.example.com:443", "/v1/reports", 7},
		{"POST", "other.example.com", "/v1/reports", 1},
		{"GET", "api.example.com", "/healthz", 0},
		{"GET", "Api.Example.COM", "/healthz", 0},
		{"HEAD", "api.example.com.:443", "/healthz", 0},
		{"GET", "status.example.com", "/anything", 0},
		{"GET", "other.example.com", "/healthz", 1},
	} {
		hr := httptest.NewRequest(c.method, c.path, nil)
		hr.Host = c.host
		hr.RemoteAddr = "192.0.2.1:1"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hr)
		got := w.Header().Get("Ratelimit")
		want := "" // exempt: no RateLimit header
		if c.cost > 0 {
			remaining -= c.cost
			want = fmt.Sprintf(`"per-minute";r=%d;t=60`, remaining)
		}
		if w.Code != 200 || got != want {
			t.Errorf("%s %s%s: %d %q, want 200 %q", c.method, c.host, c.path, w.Code, got, want)
			fmt.Sscanf(got, `"per-minute";r=%d`, &remaining) // go on from what was spent
		}
	}
}

// TestEndpointHostsOfOneNameInTwoCasesAreRefusedAtTheirLine: two patterns
// whose hosts differ only in case match the same requests, so the second
// is refused where it is written, as a pattern listed twice is.
func TestEndpointHostsOfOneNameInTwoCasesAreRefusedAtTheirLine(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{`plans: {free: {limits: [{name: m, algorithm: fixed-window, quantity: 9, window: 1m}]}}
default_plan: free
exempt: ["GET api.example.com/healthz", "GET API.example.com./healthz"]
`, `test.yaml:3:41: exempt[1]: "GET API.example.com./healthz" conflicts with "GET api.example.com/healthz"`},
		{`plans:
  free:
    limits: [{name: m, algorithm: fixed-window, quantity: 9, window: 1m}]
    costs: {"POST api.example.com/v1/reports": 5, "POST API.example.com/v1/reports": 2}
default_plan: free
`, `test.yaml:4:13: plans.free.costs.POST api.example.com/v1/reports: "POST api.example.com/v1/reports" conflicts with "POST API.example.com/v1/reports"`},
	} {
		_, err := config.Parse("test.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error:\n%v\nwant it to contain:\n%s", err, c.want)
		}
	}
}
