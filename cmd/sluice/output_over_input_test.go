package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output that names the command's own input is refused (exit 2, as a
// clash between two outputs is), the input left as it was: written over,
// the input, which nothing else holds, would be gone.
//
//	sluice import -from nginx /etc/nginx/nginx.conf -report /etc/nginx/nginx.conf
//	sluice design -requirements api.yaml -config api.yaml
//
// So is a file import writes into -dir, here Envoy rules imported from
// the envoy-rules.yaml the import writes, -force given.
func TestAnOutputNeverReplacesTheInput(t *testing.T) {
	nginx := "http {\n  limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\n  server {\n    location / {\n      limit_req zone=one;\n    }\n  }\n}\n"
	envoyRules, err := os.ReadFile(filepath.Join("..", "..", "examples", "envoy", "ratelimit-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, input, text, want string
		args                    func(dir, input string) []string
	}{
		{"import -report FILE", "nginx.conf", nginx, "it is the FILE imported", func(dir, in string) []string {
			return []string{"import", "-from", "nginx", "-dir", filepath.Join(dir, "out"), "-report", in, in}
		}},
		{"import -dir of FILE", "envoy-rules.yaml", string(envoyRules), "which is the FILE imported", func(dir, in string) []string {
			return []string{"import", "-from", "envoy", "-dir", dir, "-force", in}
		}},
		{"design -config = -requirements", "needs.yaml", "rate: 10/1m\n", "the requirements would be written over", func(dir, in string) []string {
			return []string{"design", "-requirements", in, "-config", in}
		}},
		{"design -o = -requirements", "needs.yaml", "rate: 10/1m\n", "the requirements would be written over", func(dir, in string) []string {
			return []string{"design", "-requirements", in, "-o", in}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, c.input)
			if err := os.WriteFile(in, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runSluice(t, c.args(dir, in)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, c.want)
			}
			if got, err := os.ReadFile(in); err != nil || string(got) != c.text {
				t.Errorf("the input %s now holds %d bytes (%v), want it kept", c.input, len(got), err)
			}
		})
	}
}
