package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestStatusPathShowsTheStandingWithoutSpending: on memory and Redis,
// response.status_path answers a client's own standing on the public
// listener — never proxied, spending nothing — and answers only GET and
// HEAD.
func TestStatusPathShowsTheStandingWithoutSpending(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		cfg := realtest.Replace(t, "testConfig", testConfig, "  docs_url: https://example.com/docs\n",
			"  docs_url: https://example.com/docs\n  status_path: /rate_limit\n")
		f := newFixture(t, cfg, kind)
		key := map[string]string{"X-API-Key": "demo-free-key"}
		if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 200 {
			t.Fatalf("a request: %d", r.StatusCode)
		}
		for range 5 {
			r := f.do(t, "GET", "/rate_limit", "", key)
			body := readAll(t, r)
			var st struct {
				Plan   string
				Limits []struct {
					Policy, Window         string
					Limit, Used, Remaining int64
					ResetsAt               string `json:"resetsAt"`
				}
			}
			if err := json.Unmarshal([]byte(body), &st); err != nil || r.StatusCode != 200 {
				t.Fatalf("status: %d %s (%v)", r.StatusCode, body, err)
			}
			if st.Plan != "free" || len(st.Limits) != 1 || st.Limits[0].Policy != "per-minute" || st.Limits[0].Used != 1 ||
				st.Limits[0].Remaining != 2 || st.Limits[0].ResetsAt != "2026-11-30T12:01:00Z" {
				t.Fatalf("standing: %s", body)
			}
			if got := r.Header.Get("RateLimit"); got != `"per-minute";r=2;t=60` {
				t.Errorf("RateLimit %q", got)
			}
		}
		if n := f.hits.Load(); n != 1 {
			t.Errorf("upstream saw %d requests, want 1: the status path is never proxied", n)
		}
		if r := f.do(t, "POST", "/rate_limit", "", key); r.StatusCode != 405 || r.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST: %d, Allow %q", r.StatusCode, r.Header.Get("Allow"))
		}
		// The next two requests are admitted: the readings spent nothing.
		for i := range 2 {
			if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 200 {
				t.Fatalf("request %d after the readings: %d", i+2, r.StatusCode)
			}
		}
		f.noStoreErrors(t)
	})
}

// Without response.status_path the path is the upstream's, limited as any.
func TestNoStatusPathIsProxied(t *testing.T) {
	f := newFixture(t, testConfig)
	r := f.do(t, "GET", "/rate_limit", "", nil)
	if body := readAll(t, r); r.StatusCode != 200 || !strings.HasPrefix(body, "upstream:") {
		t.Fatalf("%d %s", r.StatusCode, body)
	}
}

// /docs tells clients of the status path and of calendar quotas only when
// the configuration has them.
func TestDocsTellsTheStatusPathAndCalendarQuotas(t *testing.T) {
	f := newFixture(t, `
plans:
  free:
    limits:
      - {name: per-month, algorithm: fixed-window, quantity: 1000, window: month}
response:
  status_path: /v1/rate_limit
`)
	page := readAll(t, f.do(t, "GET", "/docs", "", nil))
	for _, want := range []string{`<p id="status-path">`, `<code>GET /v1/rate_limit</code>`, `<dt>no <code>w</code></dt>`,
		`counted per calendar month, whole again on the 1st at 00:00 UTC`, `1000 requests per month`} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs lacks %s", want)
		}
	}
	plain := readAll(t, newFixture(t, testConfig).do(t, "GET", "/docs", "", nil))
	for _, not := range []string{`id="status-path"`, `<dt>no <code>w</code></dt>`} {
		if strings.Contains(plain, not) {
			t.Errorf("/docs of a configuration without it says %s", not)
		}
	}
}
