package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportHAProxyWithNothingImportedSaysWhy: a file whose every refusal
// is left out is refused, and the error names each refusal and why it was
// left out, not only what a rate limit looks like in HAProxy.
func TestImportHAProxyWithNothingImportedSaysWhy(t *testing.T) {
	_, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s),http_err_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 } { req.hdr(X-Debug) -m sub yes }
    http-request deny if { sc_http_err_rate(0) gt 5 }
`, "haproxy.cfg")
	if err == nil {
		t.Fatal("a file with nothing to import was imported")
	}
	for _, want := range []string{"frontend fe, line 5", "req.hdr(X-Debug) -m sub yes", "frontend fe, line 6", "http_err_rate"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
