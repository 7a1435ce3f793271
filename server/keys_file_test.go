package server_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKeysFileIsWatched: a key added to the keys file (kept in another
// directory, as a mounted ConfigMap or Secret is, and replaced by a
// rename, as a config manager writes it) has its plan within seconds,
// without a signal; one taken out loses it. A change made after the
// server read the file and before it began to watch counts too.
func TestKeysFileIsWatched(t *testing.T) {
	mount := t.TempDir()
	keys := filepath.Join(mount, "keys.yaml")
	writeKeys := func(names ...string) {
		t.Helper()
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "- {name: %s, sha256: %x, plan: pro}\n", n, sha256.Sum256([]byte(n+"-secret")))
		}
		tmp := keys + ".tmp"
		if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, keys); err != nil {
			t.Fatal(err)
		}
	}
	writeKeys("acme")
	srv, _ := loadServer(t, t.TempDir(), "keys_file: "+keys+"\nplans:\n"+
		"  free: {limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]}\n"+
		"  pro: {limits: [{name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]}\n"+
		"default_plan: free\nanonymous_plan: free\n", true)
	time.Sleep(20 * time.Millisecond) // past the file system's clock tick
	writeKeys("acme", "early")        // before the watcher runs
	addrs := serveOn(t, srv)
	policy := func(name string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+addrs.public+"/api/x", nil)
		req.Header.Set("X-API-Key", name+"-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("RateLimit-Policy")
	}
	const pro, free = `"per-minute";q=1000;w=60`, `"per-minute";q=10;w=60`
	waitFor := func(name, want, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for got := policy(name); !strings.HasPrefix(got, want); got = policy(name) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s's RateLimit-Policy is %q, want %q", what, name, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("acme", pro, "at start")
	waitFor("early", pro, "after early was added before the watch began")
	if got := policy("globex"); !strings.HasPrefix(got, free) {
		t.Fatalf("an unlisted key: RateLimit-Policy %q, want the free plan's", got)
	}
	writeKeys("acme", "early", "globex")
	waitFor("globex", pro, "after globex was added to the keys file")
	writeKeys("globex")
	waitFor("acme", free, "after acme was taken out of the keys file")
}

// TestFilesRewrittenAsTheyWereDoNotReload: a configuration and a keys file
// rewritten with the same bytes (as a config manager does on every run)
// cause no reload; a change does, and SIGHUP-style Reload always does.
func TestFilesRewrittenAsTheyWereDoNotReload(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.yaml")
	line := fmt.Sprintf("- {name: acme, sha256: %x, plan: free}\n", sha256.Sum256([]byte("acme-secret")))
	rewrite := func(path, text string) {
		t.Helper()
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(keys, line)
	cfgText := "keys_file: keys.yaml\nplans:\n  free: {limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	srv, file := loadServer(t, dir, cfgText, true)
	addrs := serveOn(t, srv)
	reloads := func() string {
		t.Helper()
		resp, err := http.Get("http://" + addrs.admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return grepLines(string(b), "sluice_config_reloads_total")
	}
	time.Sleep(300 * time.Millisecond) // the watcher is up
	rewrite(file, cfgText)
	rewrite(keys, line)
	time.Sleep(time.Second) // past the debounce, had it reloaded
	if got := reloads(); got != "" {
		t.Fatalf("after files rewritten as they were: %q, want no reload", got)
	}
	rewrite(keys, line+fmt.Sprintf("- {name: globex, sha256: %x, plan: free}\n", sha256.Sum256([]byte("globex-secret"))))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(reloads(), `sluice_config_reloads_total{result="ok"} 1`) {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after a key was added, reloads: %q", reloads())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
