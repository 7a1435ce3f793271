package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A link to nothing in an Envoy rules folder, skipped, is loaded without a
// SIGHUP once its target appears, wherever that is: in a folder that does
// not exist yet, in one that does, and at the end of a chain of links.
func TestEnvoyRulesLoadASkippedLinksTargetWhenItAppears(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "rules")
	mkdir := func(path string) {
		t.Helper()
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(target, link string) {
		t.Helper()
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	rule := func(domain string) string {
		return "domain: " + domain + "\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"
	}
	mkdir(folder)
	mkdir(filepath.Join(dir, "shared"))
	mkdir(filepath.Join(dir, "hop"))
	write(filepath.Join(folder, "a.yaml"), rule("a"))
	// A target in a folder not there yet, one in a folder that is, and one
	// reached through a second link, written relative to its own folder.
	symlink(filepath.Join(dir, "shared", "later", "new.yaml"), filepath.Join(folder, "new.yaml"))
	symlink(filepath.Join(dir, "shared", "there.yaml"), filepath.Join(folder, "there.yaml"))
	symlink(filepath.Join(dir, "hop", "chained.yaml"), filepath.Join(folder, "chained.yaml"))
	symlink(filepath.Join("..", "far", "chained.yaml"), filepath.Join(dir, "hop", "chained.yaml"))
	cfgFile := filepath.Join(dir, "sluice.yaml")
	write(cfgFile, "envoy:\n  listen: 127.0.0.1:0\n  rules: rules\n  headers: none\n"+testConfig+testAdmin)
	w := startWatchedEnvoy(t, cfgFile)
	if w.limitOf("a") != 1 || w.limitOf("new") != 0 {
		t.Fatal("the rules are not served as they are")
	}
	time.Sleep(300 * time.Millisecond) // the watch begins

	write(filepath.Join(dir, "shared", "there.yaml"), rule("there"))
	w.eventually("a target appearing in a folder outside the rules folder", func() bool { return w.limitOf("there") == 1 })
	mkdir(filepath.Join(dir, "shared", "later"))
	time.Sleep(300 * time.Millisecond) // the new folder is watched
	write(filepath.Join(dir, "shared", "later", "new.yaml"), rule("new"))
	w.eventually("a target appearing in a folder created after the link", func() bool { return w.limitOf("new") == 1 })
	mkdir(filepath.Join(dir, "far"))
	write(filepath.Join(dir, "far", "chained.yaml"), rule("chained"))
	w.eventually("a target appearing at the end of a chain of links", func() bool { return w.limitOf("chained") == 1 })
}

// A rules file that is a link to a file in a folder the rules folder does
// not hold (a shared folder, or a link's target that appeared) is
// reloaded when that file is written, without a SIGHUP.
func TestEnvoyRulesReloadALinkedFileWrittenWhereItIs(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "rules")
	for _, d := range []string{folder, filepath.Join(dir, "shared")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rule := func(n int) string {
		return "domain: linked\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: " + strconv.Itoa(n) + "}\n"
	}
	target := filepath.Join(dir, "shared", "linked.yaml")
	write(target, rule(1))
	if err := os.Symlink(target, filepath.Join(folder, "linked.yaml")); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "sluice.yaml")
	write(cfgFile, "envoy:\n  listen: 127.0.0.1:0\n  rules: rules\n  headers: none\n"+testConfig+testAdmin)
	w := startWatchedEnvoy(t, cfgFile)
	if w.limitOf("linked") != 1 {
		t.Fatal("the linked rules file is not served")
	}
	time.Sleep(300 * time.Millisecond) // the watch begins
	write(target, rule(2))
	w.eventually("the linked file written", func() bool { return w.limitOf("linked") == 2 })
	// Replaced by a rename, as editors do.
	write(target+".tmp", rule(3))
	if err := os.Rename(target+".tmp", target); err != nil {
		t.Fatal(err)
	}
	w.eventually("the linked file replaced", func() bool { return w.limitOf("linked") == 3 })
}
