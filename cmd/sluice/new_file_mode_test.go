package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A file a command creates gets the permissions the user's umask allows,
// as os.Create's do (0666 less the umask): under umask 077, what design,
// import and simulate -chart write is the user's alone. A file a command
// replaces keeps the permissions it had, whatever the umask.
func TestNewFilesFollowTheUmaskAndReplacedOnesKeepTheirMode(t *testing.T) {
	bin, err := sluiceBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, config, imported := filepath.Join(dir, "design.md"), filepath.Join(dir, "sluice.yaml"), filepath.Join(dir, "imported")
	report, nginx := filepath.Join(dir, "report.md"), filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(nginx, []byte("limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;\nserver { location / { limit_req zone=one burst=5; } }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	commands := [][]string{
		{"design", "-rate", "100/1m", "-o", out, "-config", config},
		{"import", "-from", "nginx", "-dir", imported, "-report", report, nginx},
	}
	written := []string{out, config, report, filepath.Join(imported, "sluice.yaml")}
	umask := func(mask string, args []string) {
		t.Helper()
		cmd := exec.Command("/bin/bash", append([]string{"-c", `umask "$0" && exec "$@"`, mask, bin}, args...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("umask %s, %q: %v\n%s", mask, args, err, b)
		}
	}
	for _, args := range commands {
		umask("077", args)
	}
	for _, f := range written {
		if st, err := os.Stat(f); err != nil {
			t.Error(err)
		} else if perm := st.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: made %v under umask 077, want -rw------- (0666 less the umask)", f, perm)
		}
	}
	// Each file given 0640, the same commands again under umask 022:
	// each file replaced stays 0640, neither 0644 nor 0600.
	for _, f := range written {
		if err := os.Chmod(f, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range commands {
		umask("022", args)
	}
	for _, f := range written {
		if st, err := os.Stat(f); err != nil {
			t.Error(err)
		} else if perm := st.Mode().Perm(); perm != 0o640 {
			t.Errorf("%s: replaced under umask 022 with mode %v, want the -rw-r----- it had", f, perm)
		}
	}
}
