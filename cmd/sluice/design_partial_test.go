package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A design whose analysis (-o) cannot be written writes no configuration
// (-config) either, and leaves one already there as it was: exit 1 means
// nothing changed. One whose both can be written writes both.
func TestDesignWritesNoConfigurationWhenItsAnalysisFails(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "sluice.yaml")
	for _, before := range []string{"", "plans: {} # the operator's own\n"} {
		if before != "" {
			if err := os.WriteFile(config, []byte(before), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, _, stderr := runSluice(t, "design", "-rate", "10/1m", "-config", config, "-o", filepath.Join(dir, "no-such-folder", "design.md"))
		if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "no-such-folder") {
			t.Errorf("exit %d, stderr %q; want 1 and one line naming the analysis's folder", code, stderr)
		}
		got, err := os.ReadFile(config)
		if before == "" && !os.IsNotExist(err) {
			t.Errorf("a configuration was written: %v %q", err, got)
		}
		if before != "" && string(got) != before {
			t.Errorf("the configuration there was replaced: %q", got)
		}
	}
	os.Remove(config)
	if code, _, stderr := runSluice(t, "design", "-rate", "10/1m", "-config", config, "-o", filepath.Join(dir, "design.md")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(config); err != nil || !strings.Contains(string(b), "quantity: 10") {
		t.Errorf("configuration: %v %q", err, b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".sluice.yaml*")); len(left) > 0 {
		t.Errorf("left beside the configuration: %q", left)
	}
}
