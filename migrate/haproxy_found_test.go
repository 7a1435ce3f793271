package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportHAProxyHeaderFoundIsImported: tracking a header only when a
// request has it (if { req.hdr(X-API-Key) -m found }) is HAProxy's usual
// way to limit API keys; "-m found" is true whenever the header is
// present, which a rule's header match without a value says, so the
// limit is imported rather than dropped.
func TestImportHAProxyHeaderFoundIsImported(t *testing.T) {
	runImportCases(t, []importCase{{
		name:   "a header tracked only when found",
		format: "haproxy",
		src: `frontend fe
    bind :80
    http-request track-sc1 req.hdr(X-API-Key) table st_keys if { req.hdr(X-API-Key) -m found }
    http-request deny deny_status 429 if { sc_http_req_rate(1,st_keys) gt 100 } { hdr(X-Tenant) -m found }
backend st_keys
    stick-table type string len 64 size 100k expire 1h store http_req_rate(10s)
`,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules: []string{
			"fe-st_keys paths=[] headers=[{X-Tenant }] key=[header:X-Api-Key] header_from=any fallback=skip | per-10s: sliding-window-counter 100 per 10s",
		},
		same: []string{"fe, line 4 status: 429"},
	}})
}

// TestImportHAProxyNotImportedNamesTheWholeCondition: a condition the
// import cannot match is named as the file writes it, its match method
// included, so the reader can find it.
func TestImportHAProxyNotImportedNamesTheWholeCondition(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 } { req.hdr(X-Debug) -m sub yes }
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 50 }
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	want := "the condition req.hdr(X-Debug) -m sub yes is none of them"
	for _, d := range tr.Differences {
		if strings.Contains(d.Text, want) {
			return
		}
	}
	t.Errorf("no difference says %q: %+v", want, tr.Differences)
}

// TestImportedHAProxyHeaderFoundDecides serves the import of a key
// tracked only when found: requests with the key are limited per key,
// requests without it are never counted.
func TestImportedHAProxyHeaderFoundDecides(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    http-request track-sc1 req.hdr(Apikey) table st_keys if { req.hdr(Apikey) -m found }
    http-request deny deny_status 429 if { sc_http_req_rate(1,st_keys) gt 2 }
backend st_keys
    stick-table type string len 64 size 100k expire 1h store http_req_rate(1h)
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	for i, c := range []struct {
		key  string
		want int
	}{{"a", 200}, {"a", 200}, {"a", 429}, {"b", 200}, {"", 200}, {"", 200}, {"", 200}} {
		if got := sendKey(h, "/x", c.key, "192.0.2.1"); got != c.want {
			t.Errorf("request %d with key %q: %d, want %d", i, c.key, got, c.want)
		}
	}
}
