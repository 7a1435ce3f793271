package server_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// hostConfig is testConfig with hostRule(hosts).
func hostConfig(hosts string) string { return testConfig + hostRule(hosts) }

// hostRule is a rule of one request a minute for the hosts named, which
// other requests leave alone.
func hostRule(hosts string) string {
	return `
rules:
  - name: one-host
    match: {hosts: [` + hosts + `]}
    cost: 1
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}
`
}

// The host of the request forward-auth describes is its X-Forwarded-Host
// and nothing else: the Host of the forward-auth request itself names
// sluice as the front proxy reaches it (nginx's upstream, 127.0.0.1:9090),
// so a rule for the hosts sluice answers on never matches a description
// that names no host (as /v1/check's without a host), and a rule for the
// described host matches it.
func TestForwardAuthHostIsTheForwardedHost(t *testing.T) {
	ask := func(t *testing.T, f *fixture, h map[string]string) int {
		t.Helper()
		h["X-Original-Method"], h["X-Original-URI"] = "GET", "/api/search"
		r := f.do(t, "GET", "/v1/forward-auth", "", h)
		readAll(t, r)
		return r.StatusCode
	}
	t.Run("no X-Forwarded-Host: no host", func(t *testing.T) {
		f := newFixture(t, hostConfig("127.0.0.1, localhost"))
		for i := range 3 {
			if status := ask(t, f, map[string]string{"X-Forwarded-For": "198.51.100.1"}); status != 200 {
				t.Errorf("request %d: %d, want 200: a rule for sluice's own host decided a request that named no host", i+1, status)
			}
		}
	})
	t.Run("X-Forwarded-Host: that host", func(t *testing.T) {
		f := newFixture(t, hostConfig("api.example.com"))
		h := func() map[string]string {
			return map[string]string{"X-Forwarded-For": "198.51.100.1", "X-Forwarded-Host": "API.example.com:8443"}
		}
		if status := ask(t, f, h()); status != 200 {
			t.Errorf("first request to the rule's host: %d, want 200", status)
		}
		if status := ask(t, f, h()); status != 429 {
			t.Errorf("second request to the rule's host: %d, want 429", status)
		}
		if status := ask(t, f, map[string]string{"X-Forwarded-For": "198.51.100.1", "X-Forwarded-Host": "www.example.com"}); status != 200 {
			t.Errorf("a request to another host: %d, want 200", status)
		}
	})
}

// A forward-auth request without X-Forwarded-Host, under a configuration
// that names a host, is decided without one, and sluice warns that the
// proxy should send it (nginx: proxy_set_header X-Forwarded-Host $host),
// at most once every 10 s; a configuration that names no host, or a
// request with the header, is not warned about.
func TestForwardAuthWarnsOfAMissingHostWhereOneMatters(t *testing.T) {
	const warning = "forward-auth: no X-Forwarded-Host"
	for _, c := range []struct {
		name  string
		cfg   string
		host  string
		warns int
	}{
		{"a rule names a host, no X-Forwarded-Host", hostConfig("api.example.com"), "", 1},
		{"a rule names a host, X-Forwarded-Host", hostConfig("api.example.com"), "api.example.com", 0},
		{"no host named", testConfig, "", 0},
		{"an exempt pattern names a host", strings.Replace(testConfig, `exempt: ["GET /api/health"]`, `exempt: ["GET status.example.com/"]`, 1), "", 1},
		{"a degradation class names a host", testConfig + "degradation:\n  classes:\n    expensive: [\"POST ai.example.com/\"]\n", "", 1},
		{"a rule is keyed by host", testConfig + "rules:\n  - {name: by-host, key: [host], fallback: ip, cost: 1, limits: [{name: m, algorithm: fixed-window, quantity: 100, window: 1m}]}\n", "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs realtest.Buffer
			f := newFixtureWith(t, c.cfg, func(o *server.Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			for range 3 {
				r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-For": "198.51.100.1",
					"X-Original-Method": "GET", "X-Original-URI": "/api/search", "X-Forwarded-Host": c.host})
				readAll(t, r)
			}
			if n := strings.Count(logs.String(), warning); n != c.warns {
				t.Errorf("%d warnings %q, want %d:\n%s", n, warning, c.warns, logs.String())
			}
		})
	}
}
