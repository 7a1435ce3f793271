package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// An Envoy rules file that the Envoy service would not load is the
// source's fault: 400 naming its place, never a 500 asking to report a bug.
func TestDesignerImportRefusesAnEnvoySourceThatDoesNotLoad(t *testing.T) {
	f := newFixture(t, testConfig)
	src := "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: day, requests_per_unit: 99999999999999999}\n"
	body, _ := json.Marshal(map[string]any{"format": "envoy", "source": src})
	r := f.do(t, "POST", "/designer/import", string(body), nil)
	if got := readAll(t, r); r.StatusCode != 400 || !strings.Contains(got, "requests_per_unit") || !strings.Contains(got, "envoy source:4:") {
		t.Errorf("%d %s, want 400 naming envoy source:4's requests_per_unit", r.StatusCode, got)
	}
}
