package deploy_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
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

// TestContainerRunStopsWithinItsTimeout: every `podman run` the guides and
// the Containerfile show gives the container a --stop-timeout that holds
// what sluice does on SIGTERM with deploy/sluice.yaml (stopNeeds:
// shutdown.delay, then shutdown.drain for requests in flight and notify's
// queue, then the store's close), as TimeoutStopSec does for the
// systemd unit. podman's default is 10 s, after which it sends SIGKILL: no
// longer than the default drain alone, so a drain that needs it, a delay
// or the store's close is cut short.
func TestContainerRunStopsWithinItsTimeout(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("sluice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	need := stopNeeds(cfg)
	timeout := regexp.MustCompile(`--stop-timeout[ =]([0-9]+)\b`)
	command := regexp.MustCompile(`^\s*(?:#\s*)?podman run\s`)
	runs := 0
	for _, name := range []string{"../README.md", "../docs/operations.md", "Containerfile"} {
		text := strings.ReplaceAll(readFile(t, name), "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			if !command.MatchString(line) {
				continue
			}
			runs++
			got := 10 * time.Second // podman's default
			if m := timeout.FindStringSubmatch(line); m != nil {
				s, _ := strconv.Atoi(m[1])
				got = time.Duration(s) * time.Second
			}
			if got < need {
				t.Errorf("%s: %q stops the container after %v, under the %v a stop with deploy/sluice.yaml needs (shutdown.delay %v, shutdown.drain %v, the store's close): give it --stop-timeout",
					name, strings.TrimSpace(line), got, need, cfg.Shutdown.Delay, cfg.Shutdown.Drain)
			}
		}
	}
	if runs == 0 {
		t.Fatal("no podman run command found in README.md, docs/operations.md or the Containerfile")
	}
}
