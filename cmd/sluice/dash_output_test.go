package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output flag given "-" means standard output, as a FILE given "-"
// means standard input: design -o - prints the analysis and import
// -report - the report, where they go without the flag, and neither
// writes a file named "-". design -config - is refused (a usage error):
// standard output already has the analysis.
func TestDashOutputIsStandardOutput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	nginx := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(nginx, []byte("limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;\nserver { location / { limit_req zone=one burst=5; } }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"design", "-rate", "100/1m", "-o", "-"}, "# "},
		{[]string{"import", "-from", "nginx", "-dir", "imported", "-report", "-", nginx}, "shadow"},
	} {
		code, out, errOut := runSluice(t, tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%q: exit %d, want 0 and the output on standard output; stdout:\n%.300s\nstderr:\n%s", tc.args, code, out, errOut)
		}
		if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
			t.Errorf("%q wrote a file named -", tc.args)
			os.Remove(filepath.Join(dir, "-"))
		}
	}
	code, _, errOut := runSluice(t, "design", "-rate", "100/1m", "-config", "-")
	if code != 2 || !strings.Contains(errOut, "-config") {
		t.Errorf("design -config -: exit %d, want 2 and a message naming -config; stderr:\n%s", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
		t.Error("design -config - wrote a file named -")
	}
}
