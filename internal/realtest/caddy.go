package realtest

import (
	"path/filepath"
	"testing"
)

// Caddy runs Debian's caddy (2.6 or later) with caddyfile, a Caddyfile such
// as examples/caddy/Caddyfile whose site listens on addr, and returns once
// Caddy accepts connections on addr. The admin API is turned off (a global
// options block is put first, so caddyfile must not have one) and Caddy's
// data and autosaved configuration stay in a temporary directory. Caddy is
// stopped when the test ends; its log is shown if the test fails.
func Caddy(tb testing.TB, addr, caddyfile string) *Process {
	tb.Helper()
	bin := lookPath(tb, "caddy", "caddy")
	dir := tb.TempDir()
	path := filepath.Join(dir, "Caddyfile")
	write(tb, path, "{\n\tadmin off\n}\n\n"+caddyfile)
	env := []string{"HOME=" + dir, "XDG_DATA_HOME=" + dir, "XDG_CONFIG_HOME=" + dir}
	return start(tb, "caddy", dir, env, addr, bin, "run", "--config", path, "--adapter", "caddyfile")
}
