package migrate_test

import (
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/migrate"
)

// aliasedValueFile is a rules file whose first descriptor's value, a text
// of size bytes tagged !!binary, is aliased in the others (n descriptors
// in all).
func aliasedValueFile(n, size int) string {
	long := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", size)))
	var b strings.Builder
	b.WriteString("domain: api\ndescriptors:\n  - {key: k0, value: &v !!binary " + long + ", rate_limit: {unit: minute, requests_per_unit: 1}}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - {key: k%d, value: *v, rate_limit: {unit: minute, requests_per_unit: 1}}\n", i)
	}
	return b.String()
}

// importAlloc returns the bytes that importing src allocates.
func importAlloc(t *testing.T, src string) uint64 {
	t.Helper()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	if _, err := migrate.Import("envoy", src, "rules.yaml"); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// An import costs memory growing with the file, as the service's loading
// does, however many descriptors alias one long value: the value is
// decoded once, however many aliases repeat it, and a rule's name, source
// and report lines show only the start of a long key or value. Adding 390
// aliases (23 KiB of file) to a file whose 10 descriptors alias a value of
// 128 KiB does not multiply what the import allocates (it did by about
// 400, the value copied into every rule's lines).
func TestEnvoyImportOfAnAliasedLongValueCostsWhatTheFileDoes(t *testing.T) {
	small, large := aliasedValueFile(10, 128<<10), aliasedValueFile(400, 128<<10)
	a, b := importAlloc(t, small), importAlloc(t, large)
	growth := float64(len(large)) / float64(len(small))
	if float64(b) > 4*growth*float64(a) {
		t.Errorf("import of %d bytes (10 descriptors) allocates %d MB; of %d bytes (400 aliasing the same value) %d MB: %.0fx for a file %.2fx as large",
			len(small), a>>20, len(large), b>>20, float64(b)/float64(a), growth)
	}
}

// The service refuses a rules file whose descriptors' keys and values,
// each counted wherever an alias repeats it, total more than 1 GiB: the
// import refuses it too, rather than list rules the service never loads.
func TestEnvoyImportRefusesTheAliasedTextTheServiceRefuses(t *testing.T) {
	src := aliasedValueFile(1100, 1<<20)
	if _, err := envoy.LoadRules("rules.yaml", []byte(src)); err == nil {
		t.Fatal("the service loads 1100 aliases of a value of 1 MiB")
	}
	_, err := migrate.Import("envoy", src, "rules.yaml")
	if err == nil || !strings.Contains(err.Error(), "total more than 1073741824 bytes") {
		t.Errorf("got %v, want the file refused for its aliased text", err)
	}
}
