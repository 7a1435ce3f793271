package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

func TestImportHAProxy(t *testing.T) {
	runImportCases(t, []importCase{
		{
			name:   "a frontend's rate per address, on a path, with an allowlist",
			format: "haproxy",
			src: `frontend fe
    bind :80
    acl allowlist src 10.0.0.0/8 192.168.1.7
    acl listed src -f /etc/haproxy/allowlist.lst
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if !allowlist { sc_http_req_rate(0) gt 20 } { path_beg /api } !listed
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules:  []string{"fe paths=[/api /api/] key=[ip/32/128] | per-10s: sliding-window-counter 20 per 10s"},
			exempt: []string{"10.0.0.0/8", "192.168.1.7/32"},
			same:   []string{"http_req_rate(10s) is a sliding window counter", "src: one count per client address", "fe, line 7 status: 429", "10.0.0.0/8, 192.168.1.7/32 are left out of every rate limit"},
			differs: []string{"counts every request it tracks, the refused ones too", "path_beg /api also matches paths such as /apix", "HAProxy's counter counts every request track-sc0 tracks", "headers",
				"the addresses it leaves out are in /etc/haproxy/allowlist.lst, which the import does not read"},
		},
		{
			name:   "keys from a header, a cookie, a query parameter, a prefix; tables in backends and peers; unless le",
			format: "haproxy",
			src: `peers mypeers
    peer a 10.0.0.1:10000
    table keys type string len 64 size 1m expire 5m store http_req_rate(1m)
frontend api
    bind :80
    http-request track-sc0 req.hdr(X-API-Key) table mypeers/keys
    http-request track-sc1 req.cook(session) table sessions
    http-request track-sc2 url_param(token) table tokens
    tcp-request content track-sc3 src,ipmask(24,64) table nets
    http-request deny deny_status 429 unless { sc_http_req_rate(0) le 100 }
    http-request tarpit if { sc1_http_req_rate(sessions) gt 30 } METH_POST
    http-request deny if { sc_http_req_rate(2) ge 11 } { path /export/ } { req.hdr(host) -i API.example.com }
    http-request silent-drop if { sc_http_req_rate(3) gt 1000 } !{ path_beg /health/ }
    default_backend app
backend sessions
    stick-table type string len 32 size 1m expire 5m store http_req_rate(10s)
backend tokens
    stick-table type string len 32 size 1m expire 5m store http_req_rate(1h)
backend nets
    stick-table type ipv6 size 1m expire 5m store http_req_rate(1s)
backend app
    server s 127.0.0.1:9000
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"api-mypeers-keys paths=[] key=[header:X-Api-Key] header_from=any fallback=skip | per-minute: sliding-window-counter 100 per 1m0s",
				"api-sessions paths=[] methods=[POST] key=[cookie:session] fallback=skip | per-10s: sliding-window-counter 30 per 10s",
				"api-tokens paths=[/export/{$}] hosts=[api.example.com] key=[query:token] fallback=skip | per-hour: sliding-window-counter 10 per 1h0m0s",
				"api-nets paths=[] except=[/health/] key=[ip/24/64] | per-second: sliding-window-counter 1000 per 1s",
			},
			same:    []string{"req.hdr(X-API-Key): one count per value of X-API-Key, whoever sends it", "cookie session", "query parameter token", "key ip/24/64"},
			differs: []string{"a peers table is copied between HAProxy instances", "answered 500 (tarpit)", "closes the connection without an answer", "answered 403 (deny)"},
		},
		{
			name:   "backends reached by use_backend, conn_cur, and what is not imported",
			format: "haproxy",
			src: `defaults web
    mode http
    http-request deny if { sc_http_req_rate(0) gt 9 }
frontend fe
    bind :80
    stick-table type ip size 1m expire 10m store conn_cur,http_req_rate(1m),http_err_rate(1m)
    tcp-request connection track-sc0 src
    tcp-request connection reject if { sc_conn_cur(0) gt 10 }
    http-request deny if { sc_http_err_rate(0) gt 5 }
    http-request deny if { sc_http_req_rate(0) gt 5 } || { path_beg /x/ }
    http-request deny if { path_beg /private/ }
    http-request deny if { sc_http_req_rate(1) gt 5 }
    http-request deny if { sc_http_req_rate(0) gt 50 } { path_end .php }
    http-request track-sc1 req.hdr(X-Key) table keys
    http-request deny deny_status 429 if { req.hdr(X-Key),table_http_req_rate(keys) gt 7 } { path_beg /keyed/ }
    http-request deny if { req.hdr(X-Other),table_http_req_rate(keys) gt 7 }
    use_backend login if { path /login } METH_POST
    default_backend app
backend login
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 3 }
    server s 127.0.0.1:9000
backend app
    server s 127.0.0.1:9000
backend keys
    stick-table type string len 32 size 1m expire 10m store http_req_rate(30s)
backend orphan
    stick-table type ip size 1m expire 10m store http_req_rate(1m)
    http-request track-sc0 src
    http-request deny if { sc_http_req_rate(0) gt 1 }
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"fe paths=[] key=[ip/32/128] | concurrent: concurrency 10 per 10m0s",
				"fe-2 paths=[] key=[ip/32/128] | per-minute: sliding-window-counter 5 per 1m0s", // line 10's first term
				"fe-keys paths=[/keyed/] key=[header:X-Key] header_from=any fallback=skip | per-30s: sliding-window-counter 7 per 30s",
				"login-fe paths=[/login] methods=[POST] key=[ip/32/128] | per-minute: sliding-window-counter 3 per 1m0s",
			},
			differs: []string{
				"conn_cur counts a client's open connections",
				"a table of type ip holds no IPv6 address",
				"line 9: not imported: sluice has no limit on http_err_rate",
				"line 10, term { path_beg /x/ }: not imported: it compares no counter",
				"line 12: not imported: no track-sc1 before it",
				"line 16: not imported: req.hdr(X-Other),table_http_req_rate(keys) reads table keys, but nothing here tracks req.hdr(X-Other) into it",
				"line 13: not imported: sluice's rules match paths",
				"backend orphan: no frontend sends requests to it",
				"defaults web, line 3: not imported: a rule in a defaults section",
				"HAProxy's counter counts every request track-sc0 tracks",
			},
		},
	})
}

// TestImportHAProxyClientAddressFromProxies: http-request set-src (from
// X-Forwarded-For, say) and a bind line's accept-proxy make src the client
// behind a load balancer; sluice reads that address only from
// identity.trusted_proxies or proxy_protocol, so the import reports each,
// as the src key would otherwise count every client as its balancer.
func TestImportHAProxyClientAddressFromProxies(t *testing.T) {
	for _, c := range []struct{ line, phrase string }{
		{"    http-request set-src hdr(x-forwarded-for) if { src 10.0.0.0/8 }", "set-src"},
		{"    bind :443 accept-proxy", "accept-proxy"},
	} {
		tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
`+c.line+`
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }
`, "haproxy.cfg")
		if err != nil {
			t.Fatal(err)
		}
		if !reported(tr, c.phrase) {
			t.Errorf("%s: no difference mentions %s: %+v", c.line, c.phrase, tr.Differences)
		}
	}
}

// TestImportHAProxyStringTablesKeepAPrefix: a stick table of type string
// (or binary) keeps the first len bytes of a key, 32 by default, so values
// that share them count together in HAProxy; sluice counts each value, and
// the import says so with the length.
func TestImportHAProxyStringTablesKeepAPrefix(t *testing.T) {
	for _, c := range []struct{ table, track, phrase string }{
		{"type string len 8", "req.hdr(X-Key)", "first 8 bytes"},
		{"type string", "path", "first 32 bytes"},
		{"type binary len 20", "base", "first 20 bytes"},
	} {
		tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table `+c.table+` size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 `+c.track+`
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }
`, "haproxy.cfg")
		if err != nil {
			t.Fatal(err)
		}
		if !reported(tr, c.phrase) {
			t.Errorf("%s, track %s: no difference mentions the %s: %+v", c.table, c.track, c.phrase, tr.Differences)
		}
	}
}
