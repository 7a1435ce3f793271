package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestImageWeighsWhatTheGuideSays: the files of the image add up to the
// size docs/operations.md gives for it, within a fifth either way, so
// that an operator sizing a registry or a node's disk reads a true figure
// and a dependency that swells the binary is seen.
func TestImageWeighsWhatTheGuideSays(t *testing.T) {
	t.Parallel()
	m := regexp.MustCompile(`weighs\s+about (\d+) MB`).FindStringSubmatch(readFile(t, "../docs/operations.md"))
	if m == nil {
		t.Fatal("docs/operations.md's Container image section gives no size (\"weighs about N MB\")")
	}
	doc, _ := strconv.ParseFloat(m[1], 64)
	img := theImage(t)
	var total int64
	for name := range img.files {
		fi, err := os.Stat(filepath.Join(img.root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	mb := float64(total) / 1e6
	if mb < doc*0.8 || mb > doc*1.2 {
		t.Errorf("the image's files weigh %.1f MB; docs/operations.md says about %.0f MB", mb, doc)
	}
	t.Logf("the image's files weigh %.1f MB", mb)
}
