package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A -report that cannot be written fails the import before it writes
// anything: -dir is left as it was (here, not made), so that the exit 1 a
// script sees means nothing changed.
func TestImportWithAnUnwritableReportWritesNothing(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(src, []byte("limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;\nserver { location / { limit_req zone=one burst=5; } }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "migration")
	report := filepath.Join(dir, "no-such-folder", "migration.md")
	code, stdout, stderr := runSluice(t, "import", "-from", "nginx", "-dir", out, "-report", report, src)
	if code != 1 || !strings.Contains(stderr, "no-such-folder") || strings.Count(stderr, "\n") != 1 || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and one line naming the report's folder", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("-dir %s was written (stat: %v), want it left unmade", out, err)
	}
	// A report that can be written is written whole, beside no leftover.
	report = filepath.Join(dir, "migration.md")
	if code, _, stderr := runSluice(t, "import", "-from", "nginx", "-dir", out, "-report", report, src); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "limit_req") {
		t.Errorf("report: %v\n%s", err, b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".migration.md*")); len(left) > 0 {
		t.Errorf("left beside the report: %q", left)
	}
}

// A -report that names a link is written through it, to the file it
// points to, as before: the link stays.
func TestImportWritesTheReportThroughALink(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(src, []byte("limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;\nserver { location / { limit_req zone=one burst=5; } }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target, link := filepath.Join(dir, "target.md"), filepath.Join(dir, "link.md")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runSluice(t, "import", "-from", "nginx", "-dir", filepath.Join(dir, "m"), "-report", link, src); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "limit_req") {
		t.Errorf("the link's target holds %q", b)
	}
}
