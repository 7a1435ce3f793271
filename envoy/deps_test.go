package envoy_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The Envoy service takes options of its own: it compiles without the
// configuration package (and its HTTP middleware).
func TestNoConfigInDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/sluice-dev/sluice/config" || pkg == "github.com/sluice-dev/sluice/httplimit" {
			t.Errorf("envoy depends on %s", pkg)
		}
	}
}
