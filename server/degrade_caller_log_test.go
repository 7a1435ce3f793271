package server_test

import (
	"bytes"
	"strings"
	"testing"
)

// A pin and an unpin of the degradation level, which change what every
// client gets, are logged with who asked, even when the level stays.
func TestDegradationPinsNameTheirCaller(t *testing.T) {
	var logs bytes.Buffer
	f := loggedFixture(t, testConfig+`
degradation:
  factor: 0.5
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
`, &logs)
	for _, c := range []struct{ method, body, want string }{
		{"PUT", `{"level":"normal"}`, "degradation pinned"},
		{"DELETE", "", "degradation unpinned"},
	} {
		if r := f.do(t, c.method, "/v1/degradation", c.body, nil); r.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.method, r.StatusCode, readAll(t, r))
		}
		var line string
		for l := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(l, c.want) {
				line = l
			}
		}
		if !strings.Contains(line, "caller=tests") || !strings.Contains(line, "peer=127.0.0.1") {
			t.Errorf("%s: no %q line naming the caller and its peer:\n%s", c.method, c.want, logs.String())
		}
	}
}
