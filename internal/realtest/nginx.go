package realtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Nginx runs Debian's nginx (1.22 or later, with the auth_request module)
// with httpConf — the contents of an http-context file such as
// examples/nginx/sluice.conf, whose server listens on addr — and returns
// once nginx accepts connections on addr. Everything nginx writes (pid file,
// temporary files) stays in a temporary directory; its error log is its
// stderr, shown when the test fails. nginx is stopped when the test ends.
func Nginx(tb testing.TB, addr, httpConf string) *Process {
	tb.Helper()
	bin := lookPath(tb, "nginx", "nginx")
	dir := tb.TempDir()
	// Workers run as an unprivileged user when the test runs as root: they
	// must be able to reach their temporary directories.
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatalf("realtest: %v", err)
	}
	var temps strings.Builder
	for _, kind := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		temps.WriteString("    " + kind + "_temp_path " + filepath.Join(dir, kind) + ";\n")
	}
	main := "pid " + filepath.Join(dir, "nginx.pid") + ";\n" +
		"worker_processes 1;\n" +
		"events { worker_connections 256; }\n" +
		"http {\n" +
		"    access_log off;\n" +
		temps.String() +
		"    include " + filepath.Join(dir, "site.conf") + ";\n" +
		"}\n"
	write(tb, filepath.Join(dir, "nginx.conf"), main)
	write(tb, filepath.Join(dir, "site.conf"), httpConf)
	return start(tb, "nginx", dir, nil, addr,
		bin, "-e", "stderr", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"),
		"-g", "daemon off; error_log stderr;")
}

func write(tb testing.TB, path, text string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatalf("realtest: %v", err)
	}
}
