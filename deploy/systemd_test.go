package deploy_test

import (
	"bufio"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
)

// unitFile is deploy/systemd/sluice.service.
const unitFile = "systemd/sluice.service"

// readUnit returns the [Service] settings of a unit file: each key with
// its values in order (a key may be given several times).
func readUnit(t *testing.T, text string) map[string][]string {
	t.Helper()
	settings := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: %q is not key=value", unitFile, line)
			}
			settings[k] = append(settings[k], v)
		}
	}
	return settings
}

// TestSystemdUnitIsHardened reads the unit's [Service] section for the
// sandboxing a service holding no secrets and writing nothing can have,
// and has systemd-analyze verify it (with ExecStart pointed at the binary
// of the image, since nothing is installed at /usr/local/bin here) and rate
// its exposure. sluice makes TCP and UDP sockets alone (its listeners,
// Redis, the upstream, DNS, identity.jwt's keys, notify's webhook): no
// other address family is allowed.
func TestSystemdUnitIsHardened(t *testing.T) {
	t.Parallel()
	text := readFile(t, unitFile)
	s := readUnit(t, text)
	for key, want := range map[string]string{
		"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"PrivateTmp": "yes", "PrivateDevices": "yes", "CapabilityBoundingSet": "", "RestrictSUIDSGID": "yes",
		"MemoryDenyWriteExecute": "yes", "LockPersonality": "yes", "ProtectKernelTunables": "yes",
		"ProtectKernelModules": "yes", "ProtectControlGroups": "yes", "RestrictNamespaces": "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6", "SystemCallArchitectures": "native",
		"SystemCallErrorNumber": "EPERM", "ExecReload": "/bin/kill -HUP $MAINPID", "Restart": "on-failure",
	} {
		if got := s[key]; len(got) != 1 || got[0] != want {
			t.Errorf("%s: %s=%q, want %q", unitFile, key, got, want)
		}
	}
	if f := s["SystemCallFilter"]; len(f) == 0 || f[0] != "@system-service" {
		t.Errorf("%s: SystemCallFilter=%q, want @system-service first", unitFile, f)
	}

	img := theImage(t)
	analyze := systemdAnalyze(t)
	unit := writeFile(t, "sluice.service", strings.ReplaceAll(text, "/usr/local/bin/sluice", img.binary()))
	if out, err := exec.Command(analyze, "verify", unit).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unitFile, err, out)
	}
	out, err := exec.Command(analyze, "security", "--offline=true", unit).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for sluice\.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security printed no exposure level:\n%s", out)
	}
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 1.1 {
		t.Errorf("systemd-analyze security rates the unit's exposure %.1f, want at most 1.1:\n%s", level, out)
	}
}

// TestSystemdUnitRunsAndReloads runs the unit's ExecStart (the binary of
// the image, on a copy of deploy/sluice.yaml, the configuration the unit
// reads) and its ExecReload's signal: sluice serves, and counts the reload.
func TestSystemdUnitRunsAndReloads(t *testing.T) {
	t.Parallel()
	img := theImage(t)
	s := readUnit(t, readFile(t, unitFile))
	args := strings.Fields(s["ExecStart"][0])
	if args[0] != "/usr/local/bin/sluice" {
		t.Fatalf("ExecStart runs %s, want /usr/local/bin/sluice (where the unit's header installs it)", args[0])
	}
	args[0] = img.binary()
	cfg := writeFile(t, "sluice.yaml", readFile(t, "sluice.yaml"))
	swapped := false
	for i := range args[:len(args)-1] {
		if args[i] == "-config" && args[i+1] == "/etc/sluice/sluice.yaml" {
			args[i+1], swapped = cfg, true
		}
	}
	if !swapped {
		t.Fatalf("ExecStart %q does not read -config /etc/sluice/sluice.yaml", s["ExecStart"][0])
	}
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	srv := serveWith(t, public, admin, append(args, "-listen", public, "-admin-listen", admin)...)

	if reload := s["ExecReload"][0]; !strings.Contains(reload, "-HUP") {
		t.Fatalf("ExecReload %q does not send SIGHUP", reload)
	}
	if err := srv.proc.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body, _ := get(t, "http://"+admin+"/metrics", exampleToken)
		if code == http.StatusOK && strings.Contains(body, `sluice_config_reloads_total{result="ok"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGHUP, /metrics (%d) counts no reload:\n%s", code, grepLines(body, "sluice_config_reloads_total"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// systemdAnalyze returns the path of systemd-analyze, failing the test if
// it is missing.
func systemdAnalyze(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"systemd-analyze", "/usr/bin/systemd-analyze", "/bin/systemd-analyze"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatal("systemd-analyze not found: run `make deps` (make test runs it), or apt-get install systemd")
	return ""
}

// grepLines returns the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestSystemdStopTimeoutHoldsTheShutdown: the unit's TimeoutStopSec, read
// by systemd-analyze, holds what sluice does on SIGTERM with the
// configuration the unit reads (deploy/sluice.yaml): shutdown.delay,
// shutdown.drain for requests in flight and notify's queue, then the
// store's close (stopNeeds). Shorter, systemd's SIGKILL cuts it short.
func TestSystemdStopTimeoutHoldsTheShutdown(t *testing.T) {
	t.Parallel()
	s := readUnit(t, readFile(t, unitFile))
	if len(s["TimeoutStopSec"]) != 1 {
		t.Fatalf("%s: TimeoutStopSec=%q, want one (systemd's default is 90s, DefaultTimeoutStopSec)", unitFile, s["TimeoutStopSec"])
	}
	out, err := exec.Command(systemdAnalyze(t), "timespan", s["TimeoutStopSec"][0]).CombinedOutput()
	m := regexp.MustCompile(`μs: ([0-9]+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("systemd-analyze timespan %s: %v\n%s", s["TimeoutStopSec"][0], err, out)
	}
	us, _ := strconv.ParseInt(string(m[1]), 10, 64)
	timeout := time.Duration(us) * time.Microsecond
	cfg, err := config.Load("sluice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if need := stopNeeds(cfg); timeout < need {
		t.Errorf("%s: TimeoutStopSec %v is under the %v a stop with deploy/sluice.yaml needs (shutdown.delay %v, shutdown.drain %v, the store's close)",
			unitFile, timeout, need, cfg.Shutdown.Delay, cfg.Shutdown.Drain)
	}
}
