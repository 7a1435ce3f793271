package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A link to nothing in an Envoy rules folder is skipped with a warning
// naming it, at start and on every reload, as envoyproxy/ratelimit's
// loader skips it: the server starts, the rest of the tree is served and
// watched (a subfolder past the link too), and a link to nothing created
// later refuses no reload.
func TestEnvoyRulesSkipADanglingLink(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "rules")
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(name string) string {
		t.Helper()
		p := filepath.Join(folder, name)
		if err := os.Symlink(filepath.Join(dir, "gone", name), p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rule := func(domain string, n int) string {
		return "domain: " + domain + "\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: " + strconv.Itoa(n) + "}\n"
	}
	write(filepath.Join(folder, "a.yaml"), rule("a", 1))
	write(filepath.Join(folder, "z", "b.yaml"), rule("b", 1))
	old := link("old.yaml")
	cfgFile := filepath.Join(dir, "sluice.yaml")
	write(cfgFile, "envoy:\n  listen: 127.0.0.1:0\n  rules: rules\n  headers: none\n"+testConfig+testAdmin)
	w := startWatchedEnvoy(t, cfgFile)
	if w.limitOf("a") != 1 || w.limitOf("b") != 1 {
		t.Fatal("the rules beside the link are not served")
	}
	warned := func(path string) bool {
		for _, line := range strings.Split(w.logs.String(), "\n") {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, path) {
				return true
			}
		}
		return false
	}
	if !warned(old) {
		t.Errorf("no warning names %s; log:\n%s", old, w.logs.String())
	}
	time.Sleep(300 * time.Millisecond) // the watch begins
	write(filepath.Join(folder, "z", "b.yaml"), rule("b", 2))
	w.eventually("a file of a subfolder past the link changed", func() bool { return w.limitOf("b") == 2 })
	later := link("later.yaml")
	write(filepath.Join(folder, "a.yaml"), rule("a", 3))
	w.eventually("a change beside a link to nothing created later", func() bool { return w.limitOf("a") == 3 })
	w.eventually("a warning naming "+later, func() bool { return warned(later) })
}
