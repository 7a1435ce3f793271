package server

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/realtest"
)

// A refusal because the store could not decide (on_store_error deny while
// Redis is down) is logged as such: its line names the limits the request
// was held to, and says store_unavailable, so that whoever reads one
// client's refusals does not raise a limit its quota never reached.
func TestARefusalBecauseTheStoreIsDownIsLoggedAsSuch(t *testing.T) {
	var logs realtest.Buffer
	srv, _ := serverOverFailingPrimaryLogging(t, failover.Deny, 1, slog.New(slog.NewJSONHandler(&logs, nil)))
	checkVia(t, srv, "acme")
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `"msg":"request refused"`) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no refusal logged:\n%s", logs.String())
	}
	if !strings.Contains(line, `"store_unavailable":true`) {
		t.Errorf("refusal line %s, want store_unavailable: the store, not the limit, refused", line)
	}
}
