package server_test

import (
	"strings"
	"testing"
)

// ruleRow returns the row of /docs's rule table that tells limit (as
// "<rule>.<limit>") up to its name.
func ruleRow(t *testing.T, page, limit string) string {
	t.Helper()
	i := strings.Index(page, "<code>"+limit+"</code>")
	if i < 0 {
		t.Fatalf("/docs does not tell %s", limit)
	}
	return page[strings.LastIndex(page[:i], "<tr>"):i]
}

// A rule keyed by "ip/24" counts every address of a /24 together (one
// count for a whole office or carrier NAT): /docs says so, not "client
// address", the words of a rule keyed by the address alone, so that a
// client learns that its neighbours spend its quota.
func TestDocsTellTheAddressPrefixARuleCountsBy(t *testing.T) {
	f := newFixture(t, testConfig+`rules:
  - name: signup
    match: {methods: [POST], paths: ["/api/signup"]}
    key: ["ip/24"]
    limits: [{name: per-hour, algorithm: fixed-window, quantity: 2, window: 1h}]
`)
	// What the limiter does: two addresses of one /24 share the count.
	for i := range 2 {
		if r := f.do(t, "POST", "/api/signup", "", map[string]string{"X-Forwarded-For": "198.51.100.1"}); r.StatusCode != 200 {
			t.Fatalf("198.51.100.1's request %d: %d", i, r.StatusCode)
		}
	}
	if r := f.do(t, "POST", "/api/signup", "", map[string]string{"X-Forwarded-For": "198.51.100.200"}); r.StatusCode != 429 {
		t.Fatalf("198.51.100.200's first request: %d, want 429 (its /24 spent the count)", r.StatusCode)
	}
	page := readAll(t, f.do(t, "GET", "/docs", "", nil))
	if row, want := ruleRow(t, page, "signup.per-hour"), "<td>client address (IPv4 per /24: 256 addresses together; IPv6 per /64)</td>"; !strings.Contains(row, want) {
		t.Errorf("/docs tells the rule as %s, want %s", row, want)
	}
}

// A rule keyed by a header tells whom the requests without one share a
// count with: under fallback: shared, every such request counts together,
// whoever sends it; by default, each address counts its own. Under skip
// the rule limits them not at all, which the page (telling no way around
// a limit) leaves unsaid.
func TestDocsTellWhoSharesARuleFallback(t *testing.T) {
	f := newFixture(t, testConfig+`rules:
  - name: tenants
    match: {paths: ["/api/reports"]}
    key: ["header:X-Tenant"]
    header_from: any
    fallback: shared
    limits: [{name: per-hour, algorithm: fixed-window, quantity: 2, window: 1h}]
  - name: exports
    match: {paths: ["/api/exports"]}
    key: ["header:X-Tenant"]
    header_from: any
    fallback: skip
    limits: [{name: per-hour, algorithm: fixed-window, quantity: 2, window: 1h}]
  - name: uploads
    match: {paths: ["/api/uploads"]}
    key: ["header:X-Tenant"]
    header_from: any
    limits: [{name: per-hour, algorithm: fixed-window, quantity: 2, window: 1h}]
`)
	// What the limiter does: requests without X-Tenant share one count.
	for i := range 2 {
		if r := f.do(t, "GET", "/api/reports", "", map[string]string{"X-Forwarded-For": "198.51.100.1"}); r.StatusCode != 200 {
			t.Fatalf("198.51.100.1's request %d: %d", i, r.StatusCode)
		}
	}
	if r := f.do(t, "GET", "/api/reports", "", map[string]string{"X-Forwarded-For": "203.0.113.9"}); r.StatusCode != 429 {
		t.Fatalf("203.0.113.9's first request: %d, want 429 (requests without X-Tenant share one count)", r.StatusCode)
	}
	page := readAll(t, f.do(t, "GET", "/docs", "", nil))
	for limit, want := range map[string]string{
		"tenants.per-hour": "<td>value of X-Tenant; requests without it: all of them together, one count</td>",
		"exports.per-hour": "<td>value of X-Tenant</td>",
		"uploads.per-hour": "<td>value of X-Tenant; requests without it: per client address</td>",
	} {
		if row := ruleRow(t, page, limit); !strings.Contains(row, want) {
			t.Errorf("/docs tells %s as %s, want %s", limit, row, want)
		}
	}
}
