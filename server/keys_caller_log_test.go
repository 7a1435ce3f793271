package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/server"
)

// A reset asked by a caller without a name (loopback's scopes,
// admin.loopback_scopes: [admin]) is logged with who asked: loopback and
// the peer's address, never an empty caller.
func TestKeysChangesByLoopbackNameTheirCaller(t *testing.T) {
	var logs bytes.Buffer
	f := loggedFixture(t, testConfig+testAdmin+"  loopback_scopes: [read, admin]\n", &logs)
	noToken := map[string]string{server.TokenHeader: ""}
	if r := f.do(t, "DELETE", "/v1/keys/name:k1", "", noToken); r.StatusCode != 200 {
		t.Fatalf("reset from loopback: %d %s", r.StatusCode, readAll(t, r))
	}
	var line string
	for l := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(l, "keys reset") {
			line = l
		}
	}
	if line == "" || strings.Contains(line, `caller=""`) || !strings.Contains(line, "caller=loopback") || !strings.Contains(line, "peer=127.0.0.1") {
		t.Errorf("the reset is not logged with who asked (caller=loopback, peer=127.0.0.1): %q", line)
	}
}
