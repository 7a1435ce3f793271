package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A -config that is a symbolic link to the operator's configuration (a
// dotfiles or stow layout) is written through the link, beside the file it
// leads to and renamed over it at commit: when the analysis then cannot be
// written, design exits 1 and "exit 1 means nothing changed" holds (it was
// opened with O_TRUNC while the command prepared its files, and left
// empty).
func TestDesignFailureKeepsTheConfigBehindALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.yaml")
	before := "plans: {} # the operator's own\n"
	if err := os.WriteFile(target, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "sluice.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSluice(t, "design", "-rate", "10/1m", "-config", link, "-o", filepath.Join(dir, "no-such-folder", "design.md"))
	if code != 1 {
		t.Fatalf("exit %d, stderr %q; want 1", code, stderr)
	}
	got, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != before {
		t.Errorf("design exited 1 (%s) but the configuration behind -config's link is now %q, want %q unchanged",
			strings.TrimSpace(stderr), got, before)
	}
}

// The same for import -report: a report file reached through a link is
// left as it was when writing the import's files fails (here: -dir holds a
// sluice.yaml of the operator's).
func TestImportFailureKeepsTheReportBehindALink(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nginx.conf")
	nginx := "http {\n  limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\n  server {\n    location / {\n      limit_req zone=one;\n    }\n  }\n}\n"
	if err := os.WriteFile(src, []byte(nginx), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "sluice.yaml"), []byte("plans: {} # the operator's own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "report-kept.md")
	before := "the report the operator kept\n"
	if err := os.WriteFile(target, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "report.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSluice(t, "import", "-from", "nginx", "-dir", out, "-report", link, src)
	if code != 1 || !strings.Contains(stderr, "no earlier sluice import wrote it") {
		t.Fatalf("exit %d, stderr %q; want 1 refusing to replace the operator's sluice.yaml", code, stderr)
	}
	got, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != before {
		t.Errorf("import exited 1 but the report behind -report's link is now %q, want %q unchanged", got, before)
	}
}

// import writes sluice.yaml into -dir (default ".") and the report to
// -report: `sluice import -report sluice.yaml nginx.conf` renamed the
// report over the imported configuration (exit 0, the sluice.yaml left a
// Markdown report). A command line whose two outputs are one file is a
// usage error (2).
func TestImportRefusesAReportOverItsConfiguration(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nginx.conf")
	nginx := "http {\n  limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\n  server {\n    location / {\n      limit_req zone=one;\n    }\n  }\n}\n"
	if err := os.WriteFile(src, []byte(nginx), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSluice(t, "import", "-from", "nginx", "-dir", out, "-report", filepath.Join(out, "sluice.yaml"), src)
	got, _ := os.ReadFile(filepath.Join(out, "sluice.yaml"))
	if code == 0 && !strings.HasPrefix(string(got), importedMark) {
		t.Errorf("exit 0, stderr %q, and %s/sluice.yaml now begins %q: the report replaced the imported configuration; want exit 2 naming -report",
			stderr, out, string(got[:min(len(got), 50)]))
	}
}

// The same for design: -config and -o naming one file said both were
// written and kept only the configuration; a usage error (2).
func TestDesignRefusesTheConfigAndTheAnalysisInOneFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "design.md")
	code, _, stderr := runSluice(t, "design", "-rate", "100/1m", "-config", f, "-o", f)
	if code == 0 {
		t.Errorf("design -config %[1]s -o %[1]s: exit 0, stderr %q: one of the two outputs is lost; want exit 2", f, stderr)
	}
}
