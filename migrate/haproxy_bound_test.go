package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/migrate"
)

// An haproxy.cfg of more deny rules than MaxPlaces, all sections together,
// is refused saying the bound before any is translated: each is a rule,
// and 20,000 in one frontend took the import more than a minute of a core.
func TestHAProxyImportBoundsTheDenyRules(t *testing.T) {
	file := func(rules int) string {
		var b strings.Builder
		b.WriteString("frontend fe\n    bind :80\n    stick-table type ip size 100k expire 30s store http_req_rate(10s)\n    http-request track-sc0 src\n")
		for i := range rules {
			fmt.Fprintf(&b, "    acl a%d path_beg /p%d\n    http-request deny deny_status 429 if a%d { sc_http_req_rate(0) gt %d }\n", i, i, i, i+1)
		}
		return b.String()
	}
	start := time.Now()
	_, err := migrate.Import("haproxy", file(migrate.MaxPlaces+1), "haproxy.cfg")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d", migrate.MaxPlaces)) {
		t.Errorf("%d deny rules: %v, want refused saying the bound", migrate.MaxPlaces+1, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if _, err := migrate.Import("haproxy", file(10), "haproxy.cfg"); err != nil {
		t.Errorf("10 deny rules: %v", err)
	}
}
