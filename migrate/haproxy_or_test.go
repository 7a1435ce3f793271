package migrate_test

import (
	"strings"
	"testing"
)

// TestImportHAProxyOrIsARulePerTerm: HAProxy refuses a request when any
// term of an `if A || B` condition holds, as it would for `if A` and `if
// B` on two lines, and as sluice refuses a request when any rule's limit
// is over: each term becomes a rule of its own. Under unless, De Morgan
// makes the condition one of if (`unless A || B` is `if !A !B`; `unless A
// B` is `if !A || !B`).
func TestImportHAProxyOrIsARulePerTerm(t *testing.T) {
	runImportCases(t, []importCase{
		{
			name:   "two counters, each with its own conditions",
			format: "haproxy",
			src: `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request track-sc1 req.hdr(X-Tenant) table tenants
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 10 } { path_beg /api/ } || { sc_http_req_rate(1) gt 20 } METH_POST
    default_backend app
backend tenants
    stick-table type string len 64 size 10k expire 2m store http_req_rate(1m)
backend app
    server s 127.0.0.1:9000
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"fe paths=[/api/] key=[ip/32/128] | per-10s: sliding-window-counter 10 per 10s",
				"fe-tenants paths=[] methods=[POST] key=[header:X-Tenant] header_from=any fallback=skip | per-minute: sliding-window-counter 20 per 1m0s",
			},
			same: []string{"fe, line 6, term { sc_http_req_rate(0) gt 10 } { path_beg /api/ } status: 429", "fe, line 6, term { sc_http_req_rate(1) gt 20 } METH_POST status: 429"},
		},
		{
			name:   "unless with || is one conjunction of the terms negated",
			format: "haproxy",
			src: `frontend fe
    bind :80
    acl allowlist src 10.0.0.0/8
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 unless { sc_http_req_rate(0) le 10 } || allowlist
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules:  []string{"fe paths=[] key=[ip/32/128] | per-10s: sliding-window-counter 10 per 10s"},
			exempt: []string{"10.0.0.0/8"},
		},
		{
			name:   "unless with several ACLs is a term for each, negated",
			format: "haproxy",
			src: `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 unless { sc_http_req_rate(0) le 10 } { sc_http_req_rate(0) le 5 }
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"fe paths=[] key=[ip/32/128] | per-10s: sliding-window-counter 10 per 10s",
				"fe-2 paths=[] key=[ip/32/128] | per-10s: sliding-window-counter 5 per 10s",
			},
		},
	})
}

// TestImportHAProxyOrTermWithoutACounterSaysWhatToKeep: in `deny if {
// sc_http_req_rate(0) gt 10 } || is_api`, the term is_api refuses every
// request it matches, at any rate, which no sluice limit does. The term
// that compares the counter is imported; the report says the other is not,
// and gives the line to keep in HAProxy, which refuses exactly what that
// term refused.
func TestImportHAProxyOrTermWithoutACounterSaysWhatToKeep(t *testing.T) {
	runImportCases(t, []importCase{{
		name:   "a rate or an ACL",
		format: "haproxy",
		src: `frontend fe
    bind :80
    acl is_api path_beg /api/
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 10 } || is_api
`,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules:  []string{"fe paths=[] key=[ip/32/128] | per-10s: sliding-window-counter 10 per 10s"},
		differs: []string{
			"fe, line 6, term is_api: not imported: it compares no counter, so HAProxy refuses every request it matches, at any rate; no sluice limit refuses so. Keep `http-request deny deny_status 429 if is_api` in HAProxy in front of sluice (or refuse those requests in the upstream)",
		},
	}})
}

// TestHAProxyOrAgrees holds the import of `||` to Debian's haproxy: one
// rule refuses /api/ above 3 requests a minute per address or any path
// above 2 a minute per X-Tenant value. Each term alone refuses, both at
// once refuse, and what neither counts passes, alike in HAProxy and in
// sluice. The sequence sends nothing after a refusal that HAProxy counts
// and sluice does not (the documented difference) could decide.
func TestHAProxyOrAgrees(t *testing.T) {
	t.Parallel()
	targets := startHAProxyTargets(t, `frontend fe
    bind %[1]s
    stick-table type ipv6 size 10k expire 2m store http_req_rate(1m)
    http-request track-sc0 src if { path_beg /api/ }
    http-request track-sc1 req.hdr(X-Tenant) table tenants
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 3 } || { sc_http_req_rate(1) gt 2 }
    default_backend app
backend tenants
    stick-table type string len 64 size 10k expire 2m store http_req_rate(1m)
backend app
    server up %[2]s
`, okUpstream(t))
	seq := []haproxyRequest{
		// The address's term: the 4th /api/ request is over, other paths pass.
		{2, "GET", "/api/a", ""}, {2, "GET", "/api/b", ""}, {2, "GET", "/api/a", ""}, {2, "GET", "/api/a", ""}, {2, "GET", "/other", ""},
		// The tenant's term: the 3rd request of acme is over, from any address.
		{3, "GET", "/t/x", "acme"}, {3, "GET", "/t/y", "acme"}, {3, "GET", "/t/x", "acme"}, {4, "GET", "/t/x", "acme"}, {4, "GET", "/t/x", "other"},
		// Both counted at once: the tenant's term refuses first.
		{5, "GET", "/api/a", "beta"}, {5, "GET", "/api/a", "beta"}, {5, "GET", "/api/a", "beta"}, {6, "GET", "/other", "beta"},
	}
	want := []int{200, 200, 200, 429, 200,
		200, 200, 429, 429, 200,
		200, 200, 429, 429}
	expectSameStatuses(t, targets, seq, want)
}

// TestImportHAProxyUnlessOfTooManyTermsIsReported: unless (A1 A2) || (B1
// B2) || … multiplies out into 2^n terms of if; past maxOrTerms the rule
// is reported, not imported, and the file's other rules still are.
func TestImportHAProxyUnlessOfTooManyTermsIsReported(t *testing.T) {
	const pair = " { sc_http_req_rate(0) le 10 } { path_beg /a/ } ||"
	runImportCases(t, []importCase{{
		name:   "five pairs",
		format: "haproxy",
		src: `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny unless` + strings.Repeat(pair, 4) + pair[:len(pair)-3] + `
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }
`,
		limits:  []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules:   []string{"fe paths=[] key=[ip/32/128] | per-10s: sliding-window-counter 20 per 10s"},
		differs: []string{"fe, line 5: not imported: written with if, this unless condition is more than 16 terms joined by ||"},
	}})
}
