package redis_test

import (
	"os/exec"
	"strings"
	"testing"
)

// redis imports, of this module, the root and the three stores Open
// composes, which import nothing of the module but the root and its
// algorithm kernels (internal/algo), and internal/leasehold, which imports
// only the root: no import cycle can pass through redis
// (docs/architecture.md).
func TestImportsOnlyTheRootAndTheStoresOpenComposes(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/sluice-dev/sluice":                    true,
		"github.com/sluice-dev/sluice/internal/algo":      true,
		"github.com/sluice-dev/sluice/internal/leasehold": true,
		"github.com/sluice-dev/sluice/failover":           true,
		"github.com/sluice-dev/sluice/overlimit":          true,
		"github.com/sluice-dev/sluice/memory":             true,
		"github.com/sluice-dev/sluice/redis":              true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/sluice-dev/sluice") && !allowed[pkg] {
			t.Errorf("redis depends on %s", pkg)
		}
	}
}
