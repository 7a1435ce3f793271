package server_test

import (
	"strings"
	"testing"
)

// docs/operations.md: a decision API check of cost 0 is a peek, which
// decides no request, and is not counted among exempt requests: checks of
// cost 0 to an exempt route leave sluice_exempt_requests_total at 0.
func TestACheckOfCostZeroIsNoExemptRequest(t *testing.T) {
	f := newFixture(t, testConfig)
	for range 3 {
		st, m, raw := postCheck(t, f, `{"user":"u","method":"GET","path":"/api/health","cost":0}`)
		if st != 200 || m["exempt"] != true {
			t.Fatalf("peek of the exempt route: %d %s", st, raw)
		}
	}
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, `sluice_exempt_requests_total{reason="route"}`) && !strings.HasSuffix(line, " 0") {
			t.Errorf("after three checks of cost 0 (peeks, no request): %s; want 0", line)
		}
	}
}
