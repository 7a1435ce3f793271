package server_test

import (
	"net/http"
	"testing"
)

// sluice's own answers to an allowed Origin carry Access-Control-Allow-Origin
// and the exposed headers, so that a page can tell a limit from an outage
// instead of seeing "TypeError: Failed to fetch" (docs/headers.md); only
// the upstream's answers keep the upstream's CORS decision. The 502 sluice
// writes when the upstream gives no answer at all (a problem body: "the
// request was admitted and counted. Retry later.") is sluice's answer: the
// page can read it.
func TestGatewayErrorsReadableAcrossOrigins(t *testing.T) {
	cfg := `
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}]
anonymous_plan: anonymous
response:
  cors: {origins: ["https://app.example.com"]}
`
	f := newFixtureOn(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			c.Close() // the upstream breaks the connection: sluice answers 502
		}
	}))
	req, _ := http.NewRequest("GET", f.http.URL+"/x", nil)
	req.Header.Set("Origin", "https://app.example.com")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d, want sluice's 502", resp.StatusCode)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.com" {
		t.Errorf("sluice's own 502 to an allowed origin: Access-Control-Allow-Origin %q, want the origin (the page cannot read the answer)", got)
	}
	if got := resp.Header.Get("Access-Control-Expose-Headers"); got == "" {
		t.Error("sluice's own 502 to an allowed origin exposes no header (the page cannot read RateLimit or Retry-After)")
	}
}
