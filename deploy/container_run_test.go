package deploy_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestContainerRunMountsTheConfigurationDirectory: every `podman run` the
// guides and the Containerfile show mounts a directory at /etc/sluice,
// never sluice.yaml alone. A file mounted alone hides what the
// configuration names beside it (keys_file, TLS files, secret files:
// relative paths are relative to sluice.yaml), and stays the file it was
// when the container started: a file replaced on the host by a rename (an
// editor, sed -i, Ansible, Puppet) is never seen by the container — not
// by its watch, not by SIGHUP — until it restarts.
func TestContainerRunMountsTheConfigurationDirectory(t *testing.T) {
	t.Parallel()
	volume := regexp.MustCompile(`(?:-v|--volume)[ =](\S+)`)
	command := regexp.MustCompile(`^\s*(?:#\s*)?podman run\s`) // a command, in a code block or a comment
	runs := 0
	for _, name := range []string{"../README.md", "../docs/operations.md", "Containerfile"} {
		// A command continued with a backslash is one line.
		text := strings.ReplaceAll(readFile(t, name), "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			if !command.MatchString(line) {
				continue
			}
			runs++
			mounted := false
			for _, m := range volume.FindAllStringSubmatch(line, -1) {
				parts := strings.Split(m[1], ":")
				if len(parts) < 2 || !strings.HasPrefix(parts[1], "/etc/sluice") {
					continue
				}
				mounted = true
				if parts[1] != "/etc/sluice" {
					t.Errorf("%s: %q mounts %s at %s; mount the directory holding it at /etc/sluice", name, strings.TrimSpace(line), parts[0], parts[1])
				}
			}
			if !mounted {
				t.Errorf("%s: %q mounts no configuration at /etc/sluice", name, strings.TrimSpace(line))
			}
		}
	}
	if runs == 0 {
		t.Fatal("no podman run command found in README.md, docs/operations.md or the Containerfile")
	}
}
