package deploy_test

import (
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestImageHealthcheckAsksReadyz: the image's HEALTHCHECK runs its own
// binary's `sluice healthcheck` on the admin listener's /readyz at the port
// its command listens on, and that command is healthy while the image's
// binary serves deploy/sluice.yaml and unhealthy once it is asked to stop
// (shutdown.delay: /readyz answers 503 while requests are still served).
func TestImageHealthcheckAsksReadyz(t *testing.T) {
	t.Parallel()
	img := theImage(t)
	hc := img.config.Healthcheck
	if hc == nil || len(hc.Test) != 4 || hc.Test[0] != "CMD" || hc.Test[1] != img.config.Entrypoint[0] || hc.Test[2] != "healthcheck" {
		t.Fatalf("the image's health check is %+v; want CMD %s healthcheck URL (podman keeps it in the docker format only)", hc, img.config.Entrypoint[0])
	}
	if hc.Timeout <= 0 || hc.Interval <= 0 || hc.Retries <= 0 {
		t.Errorf("the health check's interval %v, timeout %v, retries %d: want each set", hc.Interval, hc.Timeout, hc.Retries)
	}
	u, err := url.Parse(hc.Test[3])
	if err != nil {
		t.Fatal(err)
	}
	_, adminPort, _ := net.SplitHostPort(img.imageFlag("-admin-listen"))
	if u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.Port() != adminPort || u.Path != "/readyz" {
		t.Errorf("the health check asks %s; want http://127.0.0.1:%s/readyz, the admin listener of the image's command", u, adminPort)
	}

	cfg := readFile(t, "sluice.yaml") + "\nshutdown:\n  delay: 5s\n"
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	s := serveWith(t, public, admin, img.command(t, writeFile(t, "sluice.yaml", cfg), public, admin)...)
	check := func() (int, string) {
		args := slices.Clone(hc.Test[1:])
		args[0] = filepath.Join(img.root, filepath.FromSlash(args[0]))
		args[2] = "http://" + admin + "/readyz"
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := check(); code != 0 {
		t.Fatalf("the health check while serving: exit %d: %s", code, out)
	}
	if err := s.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		code, out := check()
		if code == 1 && strings.Contains(out, "503") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the health check 3 s after SIGTERM, within shutdown.delay: exit %d: %s", code, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
