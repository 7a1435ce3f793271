package migrate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// importTwoAdvancedRoutes imports routes /a and /b of one service, each
// with a rate-limiting-advanced plugin of 2 per window (seconds) by
// address in the namespace shared.
func importTwoAdvancedRoutes(t *testing.T, windowA, windowB int) *migrate.Translation {
	t.Helper()
	plugin := func(window int) string {
		return fmt.Sprintf("          - {name: rate-limiting-advanced, config: {limit: [2], window_size: [%d], window_type: fixed, identifier: ip, namespace: shared}}\n", window)
	}
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    routes:
      - name: a
        paths: [/a]
        plugins:
`+plugin(windowA)+`      - name: b
        paths: [/b]
        plugins:
`+plugin(windowB), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Two rate-limiting-advanced plugins of one namespace, identifier and
// window count a client's requests to both their routes in one counter in
// Kong; the import counts each plugin apart, and must say so, naming the
// namespace.
func TestKongAdvancedPluginsSharingANamespaceAreReported(t *testing.T) {
	tr := importTwoAdvancedRoutes(t, 3600, 3600)
	if !hasDifference(tr, false, "rate-limiting-advanced namespace shared: 2 plugins with identifier ip and window_size 3600 share this namespace") {
		t.Errorf("the shared namespace is not reported:\n%s", strings.Join(differsLines(tr, ""), "\n"))
	}
}

// Plugins of one namespace but different windows share no counter: the
// report says nothing of the namespace.
func TestKongAdvancedPluginsOfOneNamespaceAndOtherWindowsShareNothing(t *testing.T) {
	tr := importTwoAdvancedRoutes(t, 3600, 60)
	if hasDifference(tr, false, "namespace shared") {
		t.Errorf("plugins of one namespace with no window in common are reported as sharing a counter")
	}
}
