package httplimit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The middleware compiles without a YAML decoder and without the
// configuration package: embedding it costs net/http, sluice and httpsfv.
func TestNoYAMLInDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(strings.ToLower(pkg), "yaml") || pkg == "github.com/sluice-dev/sluice/config" {
			t.Errorf("httplimit depends on %s", pkg)
		}
	}
}
