package realtest

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Prometheus runs Debian's prometheus (2.42 or later) with the
// configuration config (the contents of a prometheus.yml, whose rule_files
// and credentials files must be absolute paths), serving its HTTP API on
// addr, and returns once Prometheus reports itself ready. Its database stays
// in a temporary directory and keeps an hour. Prometheus is stopped when the
// test ends.
func Prometheus(tb testing.TB, addr, config string) *Process {
	tb.Helper()
	bin := lookPath(tb, "prometheus", "prometheus")
	dir := tb.TempDir()
	path := filepath.Join(dir, "prometheus.yml")
	write(tb, path, config)
	p := start(tb, "prometheus", dir, nil, addr, bin,
		"--config.file="+path, "--web.listen-address="+addr,
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--storage.tsdb.retention.time=1h")
	if err := waitReady("http://" + addr + "/-/ready"); err != nil {
		tb.Fatalf("realtest: prometheus: %v; its output:\n%s", err, p.Output())
	}
	return p
}

// Promtool returns the path of Debian's promtool (package prometheus).
func Promtool(tb testing.TB) string {
	tb.Helper()
	return lookPath(tb, "promtool", "prometheus")
}

// Podman returns the path of Debian's podman.
func Podman(tb testing.TB) string {
	tb.Helper()
	return lookPath(tb, "podman", "podman")
}

// Start runs args in directory dir ("" for the test's), in its own process
// group, with env added to the environment, and returns once it accepts TCP
// connections on addr; name names it in messages. It is stopped (SIGTERM,
// then SIGKILL) when the test ends, and its output logged if the test
// failed.
func Start(tb testing.TB, name, dir string, env []string, addr string, args ...string) *Process {
	tb.Helper()
	return start(tb, name, dir, env, addr, args...)
}

// waitReady polls url until it answers 200.
func waitReady(url string) error {
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %v: %v", url, startTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Signal sends sig to the process (not to its group).
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }
