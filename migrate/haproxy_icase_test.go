package migrate_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportHAProxyCaseInsensitiveHeaderValueIsReported: hdr(X) -i v
// matches the value in any case, where a sluice rule's header match is
// exact (no rule matches a header value in any case); the rule is
// imported with the value as written, and the report says that other
// spellings are neither counted nor refused, and that a rule per spelling
// would count each apart. Served, the import limits X-Tier: free and not
// X-Tier: FREE, which HAProxy refuses too.
func TestImportHAProxyCaseInsensitiveHeaderValueIsReported(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 } { req.hdr(X-Tier) -i free }
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.SluiceRules) != 1 || len(tr.SluiceRules[0].Headers) != 1 || tr.SluiceRules[0].Headers[0].Value != "free" {
		t.Fatalf("rules %+v, want one matching X-Tier: free", tr.SluiceRules)
	}
	found := false
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, "-i") && strings.Contains(d.Text, "FREE") && strings.Contains(d.Text, "neither counted nor refused") && strings.Contains(d.Text, "each spelling apart") {
			found = true
		}
	}
	if !found {
		t.Errorf("no difference says that -i free also matches FREE, which sluice's rule neither counts nor refuses, and that a rule per spelling counts each apart: %+v", tr.Differences)
	}
	h := serveImported(t, tr)
	send := func(tier string) int {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("X-Tier", tier)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	n := 0
	for range 25 {
		if send("free") == 200 {
			n++
		}
	}
	if n != 20 {
		t.Errorf("X-Tier: free: %d of 25 admitted, want 20", n)
	}
	if got := send("FREE"); got != 200 {
		t.Errorf("X-Tier: FREE, which the rule does not match (the difference reported): %d, want 200", got)
	}
}

// TestImportHAProxyCaseSensitiveHeaderValueSaysNothingOfCase: without -i
// HAProxy matches the value exactly, as sluice does.
func TestImportHAProxyCaseSensitiveHeaderValueSaysNothingOfCase(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 } { req.hdr(X-Tier) free }
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range tr.Differences {
		if strings.Contains(d.Text, "FREE") {
			t.Errorf("a case-sensitive match reported as one in any case: %+v", d)
		}
	}
}
