package migrate_test

import (
	"testing"
)

// TestImportHAProxySampleFoundIsTheKeysOwnFallback: tracking a cookie or a
// query parameter only when the request has it (if { req.cook(sid) -m
// found }) tracks what a rule keyed by it with fallback: skip counts, so
// the condition adds nothing and the limit is imported.
func TestImportHAProxySampleFoundIsTheKeysOwnFallback(t *testing.T) {
	runImportCases(t, []importCase{{
		name:   "a cookie and a query parameter tracked only when found",
		format: "haproxy",
		src: `frontend fe
    bind :80
    http-request track-sc1 req.cook(sid) table sessions if { req.cook(sid) -m found }
    http-request track-sc2 url_param(token) table tokens if { url_param(token) -m found } { path_beg /api/ }
    http-request deny deny_status 429 if { sc_http_req_rate(1,sessions) gt 30 }
    http-request deny deny_status 429 if { sc_http_req_rate(2,tokens) gt 10 }
backend sessions
    stick-table type string len 64 size 100k expire 1h store http_req_rate(10s)
backend tokens
    stick-table type string len 64 size 100k expire 1h store http_req_rate(1m)
`,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules: []string{
			"fe-sessions paths=[] key=[cookie:sid] fallback=skip | per-10s: sliding-window-counter 30 per 10s",
			"fe-tokens paths=[/api/] key=[query:token] fallback=skip | per-minute: sliding-window-counter 10 per 1m0s",
		},
	}})
}
