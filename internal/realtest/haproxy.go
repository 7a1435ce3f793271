package realtest

import (
	"path/filepath"
	"testing"
)

// HAProxy runs Debian's haproxy (2.6 or later) in the foreground with cfg,
// a configuration whose frontends listen on addr (a global section is
// optional), and returns once HAProxy accepts connections on addr. cfg is
// written to a temporary directory. HAProxy is stopped when the test ends;
// its output is shown if the test fails.
func HAProxy(tb testing.TB, addr, cfg string) *Process {
	tb.Helper()
	bin := lookPath(tb, "haproxy", "haproxy")
	dir := tb.TempDir()
	path := filepath.Join(dir, "haproxy.cfg")
	write(tb, path, cfg)
	return start(tb, "haproxy", dir, nil, addr, bin, "-db", "-f", path)
}
