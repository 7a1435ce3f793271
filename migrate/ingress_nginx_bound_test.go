package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/migrate"
)

// Ingresses whose hosts and paths together are more than MaxPlaces are
// refused saying the bound, before any is translated, however few the
// Ingresses: one Ingress of 40,000 paths took 18 s of a core, the rules'
// paths compared each with every other.
func TestIngressNginxImportBoundsThePaths(t *testing.T) {
	file := func(ingresses, paths int) string {
		var b strings.Builder
		for i := range ingresses {
			fmt.Fprintf(&b, "---\nkind: Ingress\nmetadata:\n  name: i%d\n  annotations: {nginx.ingress.kubernetes.io/limit-rps: \"10\"}\nspec:\n  rules:\n  - host: a.example.com\n    http:\n      paths:\n", i)
			for p := range paths {
				fmt.Fprintf(&b, "      - {path: /i%d/p%d, pathType: Prefix}\n", i, p)
			}
		}
		return b.String()
	}
	for _, c := range []struct{ ingresses, paths int }{{1, migrate.MaxPlaces + 1}, {2, migrate.MaxPlaces/2 + 1}} {
		start := time.Now()
		_, err := migrate.Import("ingress-nginx", file(c.ingresses, c.paths), "ingress.yaml")
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d", migrate.MaxPlaces)) {
			t.Errorf("%d Ingresses of %d paths: %v, want refused saying the bound", c.ingresses, c.paths, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%d Ingresses of %d paths: refusing took %v", c.ingresses, c.paths, d)
		}
	}
	if _, err := migrate.Import("ingress-nginx", file(2, 100), "ingress.yaml"); err != nil {
		t.Errorf("2 Ingresses of 100 paths: %v", err)
	}
}
