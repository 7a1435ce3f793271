package sluice

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make deps, run by a user who is not root, installs with sudo, and runs
// apt-get install with DEBIAN_FRONTEND=noninteractive (its output goes to
// /dev/null: a debconf question would wait unseen). The variable must
// reach apt-get as an argument of sudo ("sudo env DEBIAN_FRONTEND=…
// apt-get"): set in sudo's own environment, sudo's env_reset (on by
// default; DEBIAN_FRONTEND is not in Debian's env_keep) removes it. The
// fake sudo here runs its command as sudo does by default, in a reset
// environment; a fake apt-get records what it was given. Both apt-get
// calls wait for the dpkg lock (a fresh machine's unattended-upgrades
// holds it) rather than failing at once.
func TestMakeDepsKeepsDebianFrontendUnderSudo(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	env, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env")
	}
	bin := t.TempDir()
	record := filepath.Join(t.TempDir(), "apt.log")
	fake := map[string]string{
		// a user, not root
		"id": `if [ "$1" = -u ]; then echo 1000; else echo 'uid=1000(dev) gid=1000(dev)'; fi`,
		// sudo with env_reset: a fresh environment, then the command
		"sudo":    `exec ` + env + ` -i PATH="$PATH" APT_LOG="$APT_LOG" "$@"`,
		"apt-get": `echo "apt-get $* DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-unset}" >> "$APT_LOG"`,
	}
	for name, script := range fake {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(env, filepath.Join(bin, "env")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(makeBin, "-s", "deps")
	// Only the fakes (and env) on PATH: redis-server, python3 and the
	// others are "missing", so make deps installs.
	cmd.Env = []string{"PATH=" + bin, "APT_LOG=" + record, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make deps: %v\n%s", err, out)
	}
	log, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("apt-get was not run: %v\nmake deps said:\n%s", err, out)
	}
	ran := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		sub, _, _ := strings.Cut(strings.TrimPrefix(line, "apt-get "), " ")
		ran[sub] = true
		if !strings.Contains(line, " -o DPkg::Lock::Timeout=") {
			t.Errorf("make deps: %q: apt-get %s without DPkg::Lock::Timeout fails at once while another apt holds the lock", line, sub)
		}
		if sub == "install" && !strings.HasSuffix(line, "DEBIAN_FRONTEND=noninteractive") {
			t.Errorf("make deps as a user with sudo: %q: apt-get install ran without DEBIAN_FRONTEND=noninteractive (sudo drops it from its environment)", line)
		}
	}
	if !ran["update"] || !ran["install"] {
		t.Fatalf("want apt-get update and install:\n%s\nmake deps said:\n%s", log, out)
	}
}
