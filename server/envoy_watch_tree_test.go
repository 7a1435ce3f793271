package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The subfolders of an Envoy rules folder are watched as the folder is:
// a file changed in a subfolder, a subfolder created later and a file
// written in it, and a file of any name are applied without a SIGHUP; a
// file whose name starts with "." causes no reload.
func TestEnvoyRulesSubfoldersAreWatched(t *testing.T) {
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
	rule := func(domain string, n int) string {
		return "domain: " + domain + "\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: " + strconv.Itoa(n) + "}\n"
	}
	write(filepath.Join(folder, "a.yaml"), rule("a", 1))
	write(filepath.Join(folder, "teams", "pay", "b"), rule("b", 1))
	cfgFile := filepath.Join(dir, "sluice.yaml")
	write(cfgFile, "envoy:\n  listen: 127.0.0.1:0\n  rules: rules\n  headers: none\n"+testConfig+testAdmin)
	w := startWatchedEnvoy(t, cfgFile)
	limitOf, eventually, logs := w.limitOf, w.eventually, w.logs
	if limitOf("a") != 1 || limitOf("b") != 1 {
		t.Fatal("the rules at start are not served")
	}
	// Let the watch begin before the first change, as in the other watch tests.
	time.Sleep(300 * time.Millisecond)
	write(filepath.Join(folder, "teams", "pay", "b"), rule("b", 2))
	eventually("a file of a subfolder changed", func() bool { return limitOf("b") == 2 })
	write(filepath.Join(folder, "ops", "c.conf"), rule("c", 3))
	eventually("a file in a subfolder created later", func() bool { return limitOf("c") == 3 })
	write(filepath.Join(folder, "ops", "c.conf"), rule("c", 4))
	eventually("a file of a subfolder created later, changed", func() bool { return limitOf("c") == 4 })
	write(filepath.Join(folder, "ops", "deeper", "d"), rule("d", 5))
	eventually("a file two subfolders down created later", func() bool { return limitOf("d") == 5 })

	time.Sleep(300 * time.Millisecond)
	reloads := strings.Count(logs.String(), "reloading")
	write(filepath.Join(folder, "teams", ".b.swp"), "not rules")
	time.Sleep(300 * time.Millisecond)
	if got := strings.Count(logs.String(), "reloading"); got != reloads {
		t.Errorf("a dotfile in a subfolder caused %d reloads", got-reloads)
	}
}

// A rules folder mounted as the kubelet mounts a ConfigMap (each key a
// link into ..data, ..data a link to a timestamped folder) is reloaded
// when the ConfigMap is updated: ..data swapped, the keys' links as they
// were.
func TestEnvoyRulesFromAConfigMapAreReloaded(t *testing.T) {
	dir := t.TempDir()
	mount := filepath.Join(dir, "rules")
	version := func(name string, n int) {
		t.Helper()
		p := filepath.Join(mount, name, "edge.yaml")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		text := "domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: " + strconv.Itoa(n) + "}\n"
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		tmp := filepath.Join(mount, name+"_tmp")
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(mount, name)); err != nil {
			t.Fatal(err)
		}
	}
	version("..2026_12_01_00_00_00.1", 1)
	link("..2026_12_01_00_00_00.1", "..data")
	link("..data/edge.yaml", "edge.yaml")
	cfgFile := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(cfgFile, []byte("envoy:\n  listen: 127.0.0.1:0\n  rules: rules\n  headers: none\n"+testConfig+testAdmin), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWatchedEnvoy(t, cfgFile)
	limit := func() uint32 { t.Helper(); return w.limitOf("edge") }
	if got := limit(); got != 1 {
		t.Fatalf("requests_per_unit %d at start, want 1", got)
	}
	time.Sleep(500 * time.Millisecond)
	version("..2026_12_02_00_00_00.2", 2)
	link("..2026_12_02_00_00_00.2", "..data")
	for deadline := time.Now().Add(10 * time.Second); limit() != 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("10 s after the ConfigMap's ..data was swapped, the rules before it still serve")
		}
	}
}
