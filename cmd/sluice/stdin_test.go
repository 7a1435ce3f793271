package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withStdin runs f with standard input reading text.
func withStdin(t *testing.T, text string, f func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.WriteString(text)
		w.Close()
	}()
	stdin := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = stdin; r.Close() }()
	f()
}

// A FILE given as "-" is standard input, as a script piping into sluice
// writes it (kubectl get ingress -o yaml | sluice import -from
// ingress-nginx -): import's FILE, simulate's -trace and design's
// -requirements read it, each as it reads a file of the same text.
func TestFileArgumentsReadDashAsStandardInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"import", "limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;\nserver { location / { limit_req zone=one burst=5; } }\n",
			[]string{"import", "-from", "nginx", "-dir", filepath.Join(dir, "imported"), "-"}, "limit_req"},
		{"simulate", "0,a\n0.1,a\n0.2,a\n", []string{"simulate", "-trace", "-", "-limit", "1/1s"}, "3 requests"},
		{"design", "rate: 10/1m\n", []string{"design", "-requirements", "-", "-format", "yaml"}, "quantity: 10"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var code int
			var out, errOut string
			withStdin(t, c.stdin, func() { code, out, errOut = runSluice(t, c.args...) })
			if code != 0 || !strings.Contains(out, c.want) {
				t.Errorf("%q: exit %d, stderr %q; want 0 and %q in stdout:\n%s", c.args, code, errOut, c.want, out)
			}
		})
	}
}
