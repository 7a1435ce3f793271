package envoy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// writeTree writes files (path relative to root → content) and returns root.
func writeTree(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// A rules folder is read as envoyproxy/ratelimit reads its runtime folder:
// every file, whatever its name, subfolders included, but for names that
// start with "." (RUNTIME_IGNOREDOTFILES), files and folders alike.
func TestLoadRuleFilesReadsEveryFileOfTheTree(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"a.yaml":                   "domain: a\n",
		"ratelimit.conf":           "domain: b\n",
		"teams/c":                  "domain: c\n",
		"teams/payments/d.yml":     "domain: d\n",
		".hidden.yaml":             "domain: a\n", // loaded, it would define a twice
		".git/config":              "not rules",
		"teams/.swap/e.yaml":       "domain: a\n",
		"teams/payments/.d.yml.sw": "not rules",
	})
	rules, err := envoy.LoadRuleFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rules.Domains(), []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("domains %v, want %v", got, want)
	}
	files, folders, err := envoy.RuleFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "ratelimit.conf"),
		filepath.Join(dir, "teams", "c"), filepath.Join(dir, "teams", "payments", "d.yml")}
	if !slices.Equal(files, wantFiles) {
		t.Errorf("RuleFiles: files %v, want %v", files, wantFiles)
	}
	wantFolders := []string{dir, filepath.Join(dir, "teams"), filepath.Join(dir, "teams", "payments")}
	if !slices.Equal(folders, wantFolders) {
		t.Errorf("RuleFiles: folders %v, want %v", folders, wantFolders)
	}
}

// A folder mounted as the kubelet mounts a ConfigMap (each key a link
// into ..data, ..data a link to a timestamped folder holding the files,
// a key's subfolder a link into ..data too) loads each domain once.
func TestLoadRuleFilesReadsAMountedConfigMapOnce(t *testing.T) {
	mount := writeTree(t, t.TempDir(), map[string]string{
		"..2024_01_01_00_00_00.123/edge.yaml":     "domain: edge\n",
		"..2024_01_01_00_00_00.123/internal":      "domain: internal\n",
		"..2024_01_01_00_00_00.123/teams/pay.yml": "domain: pay\n",
	})
	symlink(t, "..2024_01_01_00_00_00.123", filepath.Join(mount, "..data"))
	for _, key := range []string{"edge.yaml", "internal", "teams"} {
		symlink(t, filepath.Join("..data", key), filepath.Join(mount, key))
	}
	rules, err := envoy.LoadRuleFiles(mount)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rules.Domains(), []string{"edge", "internal", "pay"}; !slices.Equal(got, want) {
		t.Errorf("domains %v, want %v", got, want)
	}
}

// A tree too deep, too large or looping through a link is refused, saying
// why, rather than read without end.
func TestLoadRuleFilesBoundsTheTree(t *testing.T) {
	deep := t.TempDir()
	path := deep
	for i := range envoy.MaxRuleDepth + 1 {
		path = filepath.Join(path, fmt.Sprint("d", i))
	}
	writeTree(t, path, map[string]string{"r.yaml": "domain: deep\n"})
	if _, err := envoy.LoadRuleFiles(deep); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d folders deep", envoy.MaxRuleDepth)) {
		t.Errorf("a tree %d folders deep: %v", envoy.MaxRuleDepth+1, err)
	}
	// One folder less deep loads.
	if err := os.Rename(path, filepath.Dir(path)+"x"); err != nil {
		t.Fatal(err)
	}
	if _, err := envoy.LoadRuleFiles(deep); err != nil {
		t.Errorf("a tree %d folders deep: %v", envoy.MaxRuleDepth, err)
	}

	large := t.TempDir()
	files := map[string]string{}
	for i := range envoy.MaxRuleEntries + 1 {
		files[fmt.Sprintf(".n%d", i)] = "" // dot names count too: each is read
	}
	writeTree(t, large, files)
	if _, err := envoy.LoadRuleFiles(large); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d entries", envoy.MaxRuleEntries)) {
		t.Errorf("a folder of %d entries: %v", envoy.MaxRuleEntries+1, err)
	}

	loop := writeTree(t, t.TempDir(), map[string]string{"sub/r.yaml": "domain: r\n"})
	symlink(t, "..", filepath.Join(loop, "sub", "back"))
	if _, err := envoy.LoadRuleFiles(loop); err == nil || !strings.Contains(err.Error(), "a link back to "+loop) {
		t.Errorf("a link back to the rules folder: %v", err)
	}
}

// A subfolder or file named beside its folder, as a configuration that
// listed subfolders before they were read gave them, is read once.
func TestLoadRuleFilesReadsATreeNamedTwiceOnce(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{"a.yaml": "domain: a\n", "sub/b.yaml": "domain: b\n"})
	for _, paths := range [][]string{
		{dir, filepath.Join(dir, "sub")},
		{filepath.Join(dir, "sub"), dir},
		{filepath.Join(dir, "sub", "b.yaml"), dir + "/"},
	} {
		rules, err := envoy.LoadRuleFiles(paths...)
		if err != nil {
			t.Errorf("%v: %v", paths, err)
			continue
		}
		if got, want := rules.Domains(), []string{"a", "b"}; !slices.Equal(got, want) {
			t.Errorf("%v: domains %v, want %v", paths, got, want)
		}
	}
}
