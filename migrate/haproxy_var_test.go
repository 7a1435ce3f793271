package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportHAProxyRateInAVariableIsReported: a refusal that compares a
// variable with a number (http-request set-var(txn.rate)
// sc_http_req_rate(0), then deny if { var(txn.rate) -m int gt 200 }) limits
// a rate that sluice reads only from a counter in the condition; it was
// left out without a word, as a refusal that compares no counter is. The
// report says it is not imported and why.
func TestImportHAProxyRateInAVariableIsReported(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 100 }
    http-request set-var(txn.rate) sc_http_req_rate(0)
    http-request deny deny_status 429 if { var(txn.rate) -m int gt 200 }
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "frontend fe, line 7: not imported: var(txn.rate)") {
		t.Errorf("line 7 is not reported: %+v", tr.Differences)
	}
}
