package sluice

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make deps fails, saying why, when the redis-server it finds (or
// installs: Debian 11 and Ubuntu 22.04 ship Redis 6) is older than 7.0,
// whose PEXPIRETIME the store's scripts use; Redis 7 passes. The fakes
// here stand for every program make deps looks for, so it installs
// nothing.
func TestMakeDepsRefusesRedisOlderThan7(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	for _, c := range []struct {
		version string
		ok      bool
	}{
		{"Redis server v=6.2.6 sha=00000000:0 malloc=jemalloc-5.1.0 bits=64 build=9c9e426e2f96cc51", false},
		{"Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=ae4d7c971a948f0", true},
	} {
		bin := fakeDepsPath(t, c.version)
		cmd := exec.Command(makeBin, "-s", "deps")
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		switch {
		case c.ok && err != nil:
			t.Errorf("make deps with %q: %v\n%s", c.version, err, out)
		case !c.ok && err == nil:
			t.Errorf("make deps with %q succeeded; the Redis tests would fail on PEXPIRETIME\n%s", c.version, out)
		case !c.ok && !strings.Contains(string(out), "Redis 7.0 or later"):
			t.Errorf("make deps with %q failed without saying why:\n%s", c.version, out)
		}
	}
}

// fakeDepsPath returns a directory of fake programs make deps looks for,
// redis-server answering --version with version; apt-get fails, so a
// program missing from the list fails the test.
func fakeDepsPath(t *testing.T, version string) string {
	t.Helper()
	bin := t.TempDir()
	programs := []string{"redis-cli", "nginx", "haproxy", "caddy", "chromium", "prometheus", "promtool",
		"podman", "buildah", "systemd-analyze", "curl", "node"}
	scripts := map[string]string{
		"redis-server": `echo '` + version + `'`,
		"apt-get":      `echo "apt-get $*: a program is missing from the fakes" >&2; exit 1`,
		"sudo":         `"$@"`,
		"python3":      `exit 0`,
	}
	for _, p := range programs {
		scripts[p] = "exit 0"
	}
	for name, script := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}
