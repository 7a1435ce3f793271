package yamlexpand_test

import (
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// expandAlloc returns the bytes allocated to expand a document of one
// chain of depth descriptors, written in flow style, with no alias in it.
func expandAlloc(t *testing.T, depth int) uint64 {
	t.Helper()
	text := "descriptors: " + strings.Repeat("[{key: k, descriptors: ", depth) + "[]" + strings.Repeat("}]", depth)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	_, ok := yamlexpand.New(yamlexpand.Options{}).Expand(&doc)
	runtime.ReadMemStats(&m1)
	if !ok {
		t.Fatal("not expanded")
	}
	return m1.TotalAlloc - m0.TotalAlloc
}

// The package comment bounds the expansion's work by the document's size:
// a document nested 4 times as deep (4 times as large) costs about 4 times
// as much to expand, not 16, as it would if the field path of every node
// (~15 bytes a level) were written out rather than only when a problem is
// reported.
func TestExpandDeepDocumentAllocatesLinearlyInItsDepth(t *testing.T) {
	small, large := expandAlloc(t, 400), expandAlloc(t, 1600)
	if large > 8*small {
		t.Errorf("a document 4 times as deep allocated %.1f times as much to expand (%d KB, against %d KB): want about 4 times",
			float64(large)/float64(small), large>>10, small>>10)
	}
}
