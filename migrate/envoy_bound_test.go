package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/migrate"
)

// An envoyproxy/ratelimit file of more descriptors than MaxPlaces, however
// nested, is refused saying the bound, before any is translated: each one
// becomes a rule of the report and of the Envoy service's tree.
func TestEnvoyImportBoundsTheDescriptors(t *testing.T) {
	file := func(n int) string {
		var b strings.Builder
		b.WriteString("domain: api\ndescriptors:\n  - key: tenant\n    descriptors:\n")
		for i := range n - 1 {
			fmt.Fprintf(&b, "      - {key: path, value: /p%d, rate_limit: {unit: second, requests_per_unit: 10}}\n", i)
		}
		return b.String()
	}
	start := time.Now()
	_, err := migrate.Import("envoy", file(migrate.MaxPlaces+1), "rules.yaml")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d", migrate.MaxPlaces)) {
		t.Errorf("%d descriptors: %v, want refused saying the bound", migrate.MaxPlaces+1, err)
	}
	// Reading 5,001 descriptors takes about 1.4 s under the race detector
	// (as long as translating 4,999): the bound catches work that grows
	// faster than the file, with room for a loaded machine (5.4 s seen at a
	// load of 8 on 2 cores).
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if _, err := migrate.Import("envoy", file(100), "rules.yaml"); err != nil {
		t.Errorf("100 descriptors: %v", err)
	}
}
