package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportHAProxyCaseInsensitiveHeaderValueIsReported: hdr(X) -i v
// matches the value in any case, where a sluice rule's header match is
// exact; the rule is imported with the value as written, and the report
// says that other spellings of it escape the limit.
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
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, "-i") && strings.Contains(d.Text, "FREE") {
			return
		}
	}
	t.Errorf("no difference says that -i free also matches FREE, which sluice's rule does not: %+v", tr.Differences)
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
