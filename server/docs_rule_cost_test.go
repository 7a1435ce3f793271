package server_test

import (
	"strings"
	"testing"
)

// A rule that sets what its requests cost says so on /docs beside its
// limit in units: "30 units per 1m" alone, with a cost table that lists
// no such endpoint ("a request costs 1 unit unless listed"), tells a
// client 30 requests where 10 are admitted.
func TestDocsTellARulesCost(t *testing.T) {
	cfg := testConfig + `rules:
  - name: exports
    match: {methods: [POST], paths: [/api/exports]}
    cost: 3
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 30, window: 1m}]
  - name: audits
    match: {methods: [GET], paths: [/api/audits]}
    cost: 0
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 30, window: 1m}]
`
	f := newFixture(t, cfg)
	page := readAll(t, f.do(t, "GET", "/docs", "", nil))
	for _, want := range []string{
		"<code>POST /api/exports</code> (3 units each)",
		"<code>GET /api/audits</code> (spends nothing: the limit only reports)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs lacks %s", want)
		}
	}
}
