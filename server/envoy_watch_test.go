package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Envoy rules folders and files are watched as the configuration file
// is: a rules file added to the folder, changed or removed is applied
// without a SIGHUP; a change that does not load is refused and logged, and
// the rules before it keep serving.
func TestEnvoyRulesAreWatched(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "rules")
	os.Mkdir(folder, 0o755)
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rule := func(domain string, n int) string {
		return "domain: " + domain + "\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: " + string(rune('0'+n)) + "}\n"
	}
	write(filepath.Join(folder, "a.yaml"), rule("a", 1))
	single := filepath.Join(dir, "single.yaml")
	write(single, rule("s", 1))
	cfgFile := filepath.Join(dir, "sluice.yaml")
	write(cfgFile, "envoy:\n  listen: 127.0.0.1:0\n  rules: [rules, single.yaml]\n  headers: none\n"+testConfig+testAdmin)
	w := startWatchedEnvoy(t, cfgFile)
	limitOf, eventually, logs := w.limitOf, w.eventually, w.logs
	if limitOf("a") != 1 || limitOf("s") != 1 || limitOf("b") != 0 {
		t.Fatal("the rules at start are not served")
	}
	write(filepath.Join(folder, "b.yml"), rule("b", 2))
	eventually("a file added to the folder", func() bool { return limitOf("b") == 2 })
	write(filepath.Join(folder, "a.yaml"), rule("a", 3))
	eventually("a file of the folder changed", func() bool { return limitOf("a") == 3 })
	write(single, rule("s", 4))
	eventually("a rules file changed", func() bool { return limitOf("s") == 4 })
	os.Remove(filepath.Join(folder, "b.yml"))
	eventually("a file removed from the folder", func() bool { return limitOf("b") == 0 })

	// An invalid change is refused, with its place, and the rules keep serving.
	write(filepath.Join(folder, "a.yaml"), "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 5}\n")
	eventually("the refusal of an invalid change", func() bool {
		return strings.Contains(logs.String(), "configuration refused") && strings.Contains(logs.String(), "a.yaml:4:")
	})
	if limitOf("a") != 3 {
		t.Error("after an invalid change, the rules before it do not serve")
	}
	// A file whose name starts with "." beside them, which is not read,
	// changes nothing. (First let a
	// reload settle that the invalid write may still have coming: one
	// written within watchSlack of the refused reload's start is read
	// again.)
	time.Sleep(300 * time.Millisecond)
	reloads := strings.Count(logs.String(), "reloading")
	write(filepath.Join(folder, ".notes.txt"), "not rules")
	time.Sleep(300 * time.Millisecond)
	if got := strings.Count(logs.String(), "reloading"); got != reloads {
		t.Errorf("a dotfile in the folder caused %d reloads", got-reloads)
	}
	write(filepath.Join(folder, "a.yaml"), rule("a", 5))
	eventually("a valid change after a refused one", func() bool { return limitOf("a") == 5 })
}
