package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// import writes -dir's files as every other file a command writes
// (preparePendingFile): a sluice.yaml that is a link to an earlier
// import's configuration (a stow or dotfiles layout, /etc/sluice/sluice.yaml
// linked into a working directory) is kept, and the file it leads to, the
// one sluice serve reads, is replaced, keeping its permissions.
func TestImportWritesThroughALinkInDir(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nginx.conf")
	conf := func(rate string) string {
		return "http {\n  limit_req_zone $binary_remote_addr zone=one:10m rate=" + rate + ";\n  server {\n    location / {\n      limit_req zone=one;\n    }\n  }\n}\n"
	}
	if err := os.WriteFile(src, []byte(conf("10r/s")), 0o644); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "etc")
	if code, _, stderr := runSluice(t, "import", "-from", "nginx", "-dir", real, "-report", filepath.Join(dir, "r1.md"), src); code != 0 {
		t.Fatalf("first import: exit %d: %s", code, stderr)
	}
	target := filepath.Join(real, "sluice.yaml")
	if err := os.Chmod(target, 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(work, "sluice.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(conf("20r/s")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runSluice(t, "import", "-from", "nginx", "-dir", work, "-report", filepath.Join(dir, "r2.md"), src); code != 0 {
		t.Fatalf("second import: exit %d: %s", code, stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s was a link to %s; import replaced it (%v, %v)", link, target, st, err)
	}
	if got, err := os.ReadFile(target); err != nil || !strings.Contains(string(got), "quantity: 20") {
		t.Errorf("the configuration the link leads to, %s, does not hold the second import's limits (quantity: 20): %v", target, err)
	}
	if ts, err := os.Stat(target); err != nil || ts.Mode().Perm() != 0o600 {
		t.Errorf("the configuration behind the link: %v, %v; want its 0600 kept", ts, err)
	}
	if left, _ := filepath.Glob(filepath.Join(real, ".sluice.yaml*")); len(left) > 0 {
		t.Errorf("left beside the configuration: %q", left)
	}
}
