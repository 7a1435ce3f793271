package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The analysis design -o writes, like every file the commands write, is
// written beside its name and renamed over it (pendingFile): a write that
// fails part way — a full disk, a quota, here a file size limit of 2 KiB —
// exits 1 and leaves the file there as it was, with nothing left beside
// it, rather than the first 2 KiB of the new analysis in place of the one
// the operator had ("exit 1 means nothing changed", as for -config in
// TestDesignWritesNoConfigurationWhenItsAnalysisFails). The error must be
// the write's, naming the file, or the test would pass on a run that
// failed for another reason.
func TestDesignAnalysisThatCannotBeWrittenLeavesTheFileThere(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ulimit -f and EFBIG as on Linux")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for ulimit -f")
	}
	bin, err := sluiceBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "design.md")
	config := filepath.Join(dir, "sluice.yaml")
	before := strings.Repeat("the analysis the operator kept\n", 250) // 7.75 KiB
	if err := os.WriteFile(out, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	// ulimit -f counts 1024-byte blocks in bash: writes past 2 KiB fail
	// with EFBIG (Go ignores SIGXFSZ). The analysis is about 5 KiB, the
	// configuration under 2 KiB.
	for _, format := range []string{"markdown", "json"} {
		cmd := exec.Command("bash", "-c", `ulimit -f 2 && exec "$0" design -rate 100/1m -format "$1" -o "$2" -config "$3"`, bin, format, out, config)
		stderr, _ := cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("-format %s under a 2 KiB file size limit: %v, want exit 1; output %q", format, cmd.ProcessState, stderr)
		}
		if !strings.Contains(string(stderr), out) || !strings.Contains(string(stderr), "file too large") {
			t.Fatalf("-format %s: stderr %q, want the write of %s failing for its size", format, stderr, out)
		}
		if strings.Contains(string(stderr), "written") {
			t.Errorf("-format %s: stderr %q says a file was written", format, stderr)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != before {
			t.Errorf("-format %s: design exited 1 but replaced %s: %d bytes beginning %q, want the %d bytes there before",
				format, out, len(got), string(got[:min(len(got), 60)]), len(before))
		}
		if _, err := os.Lstat(config); !os.IsNotExist(err) {
			t.Errorf("-format %s: a configuration was written (%v)", format, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
			t.Errorf("-format %s: left in %s: %q", format, dir, left)
		}
	}
	// Without the limit, the same command replaces the analysis.
	if code, _, stderr := runSluice(t, "design", "-rate", "100/1m", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, err := os.ReadFile(out); err != nil || string(got) == before || !strings.HasPrefix(string(got), "#") {
		t.Errorf("design -o: %v, %s begins %q", err, out, string(got[:min(len(got), 60)]))
	}
}
