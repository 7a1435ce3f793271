package envoy_test

import (
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// allocOf returns the bytes that loading file allocates, and its error.
func allocOf(file string) (uint64, error) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	_, err := envoy.LoadRules("rules.yaml", []byte(file))
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc, err
}

// A mapping deep in the file whose n keys are all written before a merge
// key that sets them too has each of the n keys reported by the alias
// expansion, but only the first yamlcheck.MaxErrors are listed: only
// their field paths are written out, so that refusing the file costs what
// refusing the same file with the merge key first does (each key then an
// unknown field), not n times the depth.
func TestKeysBeforeADeepMergeKeyAreRefusedInTimeLinearInTheFile(t *testing.T) {
	const depth, n = 500, 10000
	var keys strings.Builder
	for i := range n {
		if i > 0 {
			keys.WriteString(", ")
		}
		fmt.Fprintf(&keys, "k%d: 0", i)
	}
	deep := func(mapping string) string {
		return "domain: d\nx: &m {" + keys.String() + "}\ndescriptors: " +
			strings.Repeat("[{key: k, descriptors: ", depth) +
			"[" + mapping + "]" + strings.Repeat("}]", depth) + "\n"
	}
	base, err := allocOf(deep("{<<: *m, " + keys.String() + "}"))
	if err == nil {
		t.Fatal("the keys are unknown fields: want an error")
	}
	file := deep("{" + keys.String() + ", <<: *m}")
	alloc, err := allocOf(file)
	if err == nil || !strings.Contains(err.Error(), "set before the merge key") {
		t.Fatalf("got %.300v, want the keys set before the merge key refused", err)
	}
	if alloc > 2*base {
		t.Errorf("refusing a %d-byte file whose %d keys come before a merge key %d levels deep allocated %d MB, the same file with the merge key first %d MB: want at most twice as much",
			len(file), n, depth, alloc>>20, base>>20)
	}
}

// A value tagged !!binary, anchored once and aliased in many descriptors,
// is base64-decoded once, and its descriptors share the text, as they
// share a value written plain: loading the file costs what loading the
// plain one does, and one decoding.
func TestAnAliasedBinaryValueIsDecodedOnce(t *testing.T) {
	const size, uses = 1 << 20, 100
	raw := strings.Repeat("v", size)
	file := func(text string) string {
		var b strings.Builder
		b.WriteString("domain: d\ndescriptors:\n  - {key: k, value: &v " + text + ", rate_limit: {unit: minute, requests_per_unit: 5}}\n")
		for i := range uses {
			fmt.Fprintf(&b, "  - {key: k%d, value: *v, rate_limit: {unit: minute, requests_per_unit: 5}}\n", i)
		}
		return b.String()
	}
	plainFile := file(raw)
	binFile := file("!!binary " + base64.StdEncoding.EncodeToString([]byte(raw)))
	plain, err := allocOf(plainFile)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := allocOf(binFile)
	if err != nil {
		t.Fatal(err)
	}
	// The !!binary file is 4/3 the size of the plain one; decoding it once
	// costs about that much again. Decoding it at each of the uses would
	// cost uses times the value.
	if bin > plain+10*uint64(len(binFile)) {
		t.Errorf("the file with the value tagged !!binary (%d bytes) allocated %d MB to load, the same file with the value plain (%d bytes) %d MB: want the difference within 10 times the file (one decoding)",
			len(binFile), bin>>20, len(plainFile), plain>>20)
	}
}
