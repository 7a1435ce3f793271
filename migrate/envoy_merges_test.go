package migrate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// The import reads an Envoy rules file through the same expansion as the
// service (internal/yamlexpand), and so does POST /designer/import, whose
// bodies may be 1 MiB (docs/designer.md). A ~200 KB file whose merge key
// names one mapping of 10,000 keys 25,000 times would set 250,000,000
// keys, growing with the square of the file. gopkg.in/yaml.v2, as
// envoyproxy/ratelimit reads the file, refuses it quickly ("document
// contains excessive aliasing"), and so does the import.
func TestEnvoyImportMergingOneMappingManyTimesIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("domain: api\ndescriptors:\n  - &a {key: x")
	for i := range 10_000 {
		fmt.Fprintf(&b, ", k%d: 1", i)
	}
	b.WriteString("}\n  - {<<: [" + strings.Repeat("*a, ", 25_000) + "*a], key: y}\n")
	_, err := migrate.Import("envoy", b.String(), "rules.yaml")
	if want := "rules.yaml:4: descriptors[1].<<: the document's aliases and merge keys copy more than "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s…", err, want)
	}
}
