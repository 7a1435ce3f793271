package server_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAFileRestoredAfterARefusedReloadIsInForceAgain: a configuration file
// broken by an edit is refused (sluice_config_last_reload_successful 0);
// written back as it was — the operator's fix, undoing the edit — it is
// the configuration in force again, and the gauge says so, without a
// SIGHUP, as the SluiceConfigReloadRefused runbook promises.
func TestAFileRestoredAfterARefusedReloadIsInForceAgain(t *testing.T) {
	dir := t.TempDir()
	cfgText := "plans:\n  free: {limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	srv, file := loadServer(t, dir, cfgText, true)
	addrs := serveOn(t, srv)
	rewrite := func(text string) {
		t.Helper()
		tmp := filepath.Join(dir, "sluice.yaml.tmp")
		if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	metrics := func() string {
		t.Helper()
		resp, err := http.Get("http://" + addrs.admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return grepLines(string(b), "sluice_config_")
	}
	waitFor := func(want, after string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !slices.Contains(strings.Split(metrics(), "\n"), want) {
			if time.Now().After(deadline) {
				t.Fatalf("10 s after %s, want %q in:\n%s", after, want, metrics())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(300 * time.Millisecond) // the watcher is up
	rewrite(strings.Replace(cfgText, "quantity: 10", "quantity: ten", 1))
	waitFor("sluice_config_last_reload_successful 0", "the file was broken")
	rewrite(cfgText)
	waitFor("sluice_config_last_reload_successful 1", "the file was written back as it was")
}
