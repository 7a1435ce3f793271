package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReliabilityListsEveryFuzzTarget holds RELIABILITY.md's Fuzzing table
// and the summary's count of fuzz targets to the module's fuzz targets
// (every func Fuzz… of a _test.go file outside bench/ and examples/, which
// are modules of their own).
func TestReliabilityListsEveryFuzzTarget(t *testing.T) {
	doc, err := os.ReadFile("../RELIABILITY.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n## Fuzzing\n")
	if !ok {
		t.Fatal("RELIABILITY.md has no section Fuzzing")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`(Fuzz[A-Za-z0-9_]+)`").FindAllStringSubmatch(table, -1) {
		listed[m[1]] = true
	}
	fuzz := regexp.MustCompile(`(?m)^func (Fuzz[A-Za-z0-9_]+)\(`)
	targets := map[string]bool{}
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == "../bench" || path == "../examples" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range fuzz.FindAllStringSubmatch(string(src), -1) {
			targets[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) < 10 {
		t.Fatalf("found %d fuzz targets", len(targets))
	}
	for name := range targets {
		if !listed[name] {
			t.Errorf("%s is a fuzz target that RELIABILITY.md's Fuzzing table does not list", name)
		}
	}
	for name := range listed {
		if !targets[name] {
			t.Errorf("RELIABILITY.md's Fuzzing table lists %s, which is no fuzz target", name)
		}
	}
	m := regexp.MustCompile(`(\d+) now, listed under \[Fuzzing\]`).FindStringSubmatch(string(doc))
	if m == nil {
		t.Fatal("RELIABILITY.md's summary does not say how many fuzz targets there are now")
	}
	if n, _ := strconv.Atoi(m[1]); n != len(targets) {
		names := make([]string, 0, len(targets))
		for name := range targets {
			names = append(names, name)
		}
		slices.Sort(names)
		t.Errorf("the summary counts %d fuzz targets; there are %d: %s", n, len(targets), strings.Join(names, " "))
	}
}
